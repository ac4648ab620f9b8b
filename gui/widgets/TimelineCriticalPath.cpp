// The timeline's critical-path overlay (TimelineView's members for it): outlines on the
// path's records, dashed joins between consecutive ones, and the selected record's
// dependency arrows from analyze's graph. Kept apart from the track layout code.
#include <QPainter>
#include <algorithm>

#include "widgets/KernelPalette.h"
#include "widgets/TimelineView.h"

namespace tunescope::gui {

void TimelineView::setCriticalPath(CriticalPathModelPtr model) {
  path_ = std::move(model);
  update();
}

void TimelineView::setCriticalPathShown(bool shown) {
  pathShown_ = shown;
  update();
}

std::optional<QRectF> TimelineView::activityBox(uint32_t activity) const {
  if (!document_ || activity >= document_->trace().activities.size()) return std::nullopt;
  const int track = trackOfActivity(activity);
  if (track < 0) return std::nullopt;
  const QRect lane = activityLaneRect(track);
  if (lane.isEmpty()) return std::nullopt;  // its group is collapsed
  const profiler::Activity& a = document_->trace().activities[activity];
  const double left = headerWidth_ + timeline_.mapTimeToX(static_cast<double>(a.start_ns));
  const double right = headerWidth_ + timeline_.mapTimeToX(static_cast<double>(a.end_ns));
  const double areaLeft = headerWidth_, areaRight = headerWidth_ + timeline_.width;
  if (right < areaLeft || left > areaRight) return std::nullopt;
  const double x = std::max(left, areaLeft - 2);
  const double width = std::max(2.0, std::min(right, areaRight + 2) - x);
  return QRectF(x, lane.top() + 1, width, lane.height() - 2);
}

std::vector<QRectF> TimelineView::criticalPathRects() const {
  std::vector<QRectF> out;
  if (!path_ || !pathShown_) return out;
  for (uint32_t a : path_->pathActivities())
    if (const auto box = activityBox(a)) out.push_back(*box);
  return out;
}

std::vector<QLineF> TimelineView::dependencyLines() const {
  std::vector<QLineF> out;
  if (!path_ || !selected_) return out;
  for (const DependencyLink& link : path_->linksOf(*selected_)) {
    // Launches are drawn with the trace's own launch flows (flowLines).
    if (link.kind == profiler::analysis::EdgeKind::launch) continue;
    std::optional<QPointF> from;
    if (const auto box = activityBox(link.from))
      from = QPointF(box->right(), box->center().y());
    else
      from = activityAnchor(link.from);
    const auto to = activityAnchor(link.to);
    if (from && to) out.emplace_back(*from, *to);
  }
  return out;
}

void TimelineView::paintCriticalPath(QPainter& p) {
  const std::vector<QRectF> boxes = criticalPathRects();
  if (boxes.empty()) return;
  p.save();
  p.setRenderHint(QPainter::Antialiasing);
  p.setClipRect(rowsViewport().adjusted(headerWidth_, 0, 0, 0));
  QPen join(palette::kCriticalPath, 1.2, Qt::DashLine);
  p.setBrush(Qt::NoBrush);
  for (size_t i = 1; i < boxes.size(); ++i) {
    p.setPen(join);
    p.drawLine(QPointF(boxes[i - 1].right(), boxes[i - 1].center().y()),
               QPointF(boxes[i].left(), boxes[i].center().y()));
  }
  p.setPen(QPen(palette::kCriticalPath, 2.2));
  for (const QRectF& box : boxes) p.drawRect(box);
  p.restore();
}

}  // namespace tunescope::gui
