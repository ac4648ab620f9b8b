// Layout, painting and hit-testing of a lane's track.
#include "widgets/TrackItem.h"

namespace tunescope::gui {

TrackItem::TrackItem(const TraceDocument& document, const Track& track)
    : track_(track), indent_(document.ranked() ? 34 : 22) {
  for (size_t row : track.rangeRows)
    rows_.push_back(std::make_unique<RangeRowItem>(document.rangeRows()[row]));
  if (track.activityLane)
    lane_ = std::make_unique<ActivityLaneItem>(document.lanes()[*track.activityLane]);
}

QString TrackItem::subLabel() const {
  QStringList parts;
  if (lane_) parts << lane_->subLabel();
  if (!rows_.empty())
    parts << QStringLiteral("%1 range level%2").arg(rows_.size()).arg(rows_.size() == 1 ? "" : "s");
  return parts.join(QStringLiteral(" · "));
}

int TrackItem::height() const { return laneTop() + laneHeight() + 1; }

void TrackItem::setHeights(int rangeRowPixels, int lanePixels) {
  rangeRowHeight_ = rangeRowPixels;
  for (auto& row : rows_) row->setHeight(rangeRowPixels);
  if (lane_) lane_->setHeight(lanePixels);
}

void TrackItem::drawContents(QPainter& p, const QRect& area,
                             const TimelinePaintContext& ctx) const {
  const QRect clip = p.hasClipping() ? p.clipBoundingRect().toAlignedRect() : area;
  for (int depth = 0; depth < rangeDepths(); ++depth) {
    const QRect rowArea(area.left(), area.top() + rangeRowTop(depth), area.width(),
                        rangeRowHeight_);
    if (rowArea.intersects(clip)) rows_[static_cast<size_t>(depth)]->drawContents(p, rowArea, ctx);
  }
  if (lane_) {
    const QRect laneArea(area.left(), area.top() + laneTop(), area.width(), lane_->height());
    if (laneArea.intersects(clip)) lane_->drawContents(p, laneArea, ctx);
  }
}

std::optional<TimelineHit> TrackItem::hitTest(double x, double y,
                                              const TimelinePaintContext& ctx) const {
  if (y < laneTop() - (rows_.empty() ? 0 : kStackGap)) {
    const int depth = static_cast<int>(y) / rangeRowHeight_;
    if (depth < 0 || depth >= rangeDepths()) return std::nullopt;
    return rows_[static_cast<size_t>(depth)]->hitTest(x, y - rangeRowTop(depth), ctx);
  }
  if (lane_) return lane_->hitTest(x, y - laneTop(), ctx);
  return std::nullopt;
}

}  // namespace tunescope::gui
