// Painting and interaction of the timeline canvas.
#include "widgets/TimelineView.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>
#include <QSettings>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <set>

#include "models/KernelKind.h"
#include "models/TimeFormat.h"
#include "widgets/ActivityLaneItem.h"
#include "widgets/KernelPalette.h"
#include "widgets/RangeRowItem.h"
#include "widgets/TrackItem.h"

namespace tunescope::gui {

namespace {
constexpr double kKeyZoomFactor = 1.5;
constexpr double kKeyPanFraction = 0.15;
// Row heights the layout chooses from, largest first: range rows keep a line of text
// down to 13 px; lanes stay clickable at 20 px.
constexpr int kRangeRowHeights[] = {18, 16, 14, 12, 10, 8};
constexpr int kLaneMinHeights[] = {34, 28, 20};
constexpr int kLaneMaxHeight = 72;
constexpr double kWheelScrollPixels = 60;  // per 120-unit wheel notch
}  // namespace

TimelineView::TimelineView(QWidget* parent)
    : QWidget(parent), vScroll_(new QScrollBar(Qt::Vertical, this)) {
  vScroll_->hide();
  vScroll_->setFocusPolicy(Qt::NoFocus);
  connect(vScroll_, &QScrollBar::valueChanged, this, qOverload<>(&QWidget::update));
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  setMinimumSize(400, 160);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void TimelineView::setDocument(TraceDocumentPtr document) {
  document_ = std::move(document);
  selection_.reset();
  highlighted_.clear();
  instances_.clear();
  instancePosition_ = -1;
  focused_.reset();
  selected_.reset();
  path_.reset();
  rebuildItems();
  syncWidth();
  const profiler::Interval extent = document_ ? document_->extent() : profiler::Interval{0, 1};
  timeline_.setBounds(extent.start_ns, extent.end_ns);
  windowChanged();
}

QString TimelineView::settingsKey() const {
  return QStringLiteral("timeline/collapsed/") + (document_ ? document_->kind() : QString());
}

void TimelineView::rebuildItems() {
  items_.clear();
  groupItems_.clear();
  trackItems_.clear();
  trackOfLane_.clear();
  trackOfKey_.clear();
  if (!document_) {
    rebuildShown();
    return;
  }
  const QStringList collapsed = QSettings().value(settingsKey()).toStringList();
  const auto& groups = document_->trackGroups();
  const auto& tracks = document_->tracks();
  trackItems_.resize(tracks.size(), nullptr);
  trackOfLane_.assign(document_->lanes().size(), -1);
  for (size_t g = 0; g < groups.size(); ++g) {
    auto header = std::make_unique<GroupHeaderItem>(groups[g], static_cast<int>(g));
    header->setCollapsed(collapsed.contains(groups[g].key));
    groupItems_.push_back(header.get());
    items_.push_back(std::move(header));
    if (!groups[g].device) continue;  // a rank's group: its device groups hold the tracks
    for (size_t t : groups[g].tracks) {
      auto track = std::make_unique<TrackItem>(*document_, tracks[t]);
      trackItems_[t] = track.get();
      items_.push_back(std::move(track));
      trackOfKey_[tracks[t].key] = static_cast<int>(t);
      if (tracks[t].activityLane) trackOfLane_[*tracks[t].activityLane] = static_cast<int>(t);
    }
  }
  // Wide enough for the labels by default: the user should not have to drag to read them.
  const QFontMetrics fm(paintFont());
  int widest = 0;
  for (const auto& item : items_)
    widest = std::max(widest, item->indent() + fm.horizontalAdvance(item->label()) + 12);
  headerWidth_ =
      std::clamp(widest, static_cast<int>(kHeaderWidth), static_cast<int>(kMaxDefaultHeaderWidth));
  rebuildShown();
}

void TimelineView::rebuildShown() {
  shown_.clear();
  for (GroupHeaderItem* header : groupItems_) {
    const auto parent = header->group().parent;
    if (parent && groupItems_[*parent]->collapsed()) continue;
    shown_.push_back(header);
    if (header->collapsed() || !header->group().device) continue;
    for (size_t t : header->group().tracks) shown_.push_back(trackItems_[t]);
  }
  layoutLanes();
  vScroll_->setValue(0);
  updateScrollBar();
  updateGeometry();
  update();
}

bool TimelineView::isGroupCollapsed(int group) const {
  return group >= 0 && group < static_cast<int>(groupItems_.size()) &&
         groupItems_[static_cast<size_t>(group)]->collapsed();
}

void TimelineView::setGroupCollapsed(int group, bool collapsed) {
  if (group < 0 || group >= static_cast<int>(groupItems_.size())) return;
  GroupHeaderItem& header = *groupItems_[static_cast<size_t>(group)];
  if (header.collapsed() == collapsed) return;
  header.setCollapsed(collapsed);
  QStringList remembered = QSettings().value(settingsKey()).toStringList();
  remembered.removeAll(header.group().key);
  if (collapsed) remembered.append(header.group().key);
  QSettings().setValue(settingsKey(), remembered);
  rebuildShown();
}

void TimelineView::layoutLanes() {
  // The densest of the preferred sizes that fits every shown track in the viewport;
  // the smallest when none does (then the rows scroll).
  int headers = 0, depths = 0, lanes = 0, tracks = 0;
  for (const TimelineItem* item : shown_) {
    if (const auto* track = dynamic_cast<const TrackItem*>(item)) {
      depths += track->rangeDepths();
      lanes += track->hasActivities() ? 1 : 0;
      tracks += 1;
    } else {
      headers += item->height();
    }
  }
  const int free = std::max(0, height() - kRulerHeight - kLegendHeight) - headers - 3 * tracks;
  int rangeHeight = kRangeRowHeights[std::size(kRangeRowHeights) - 1];
  int laneHeight = kLaneMinHeights[std::size(kLaneMinHeights) - 1];
  bool fits = false;
  for (int laneMin : kLaneMinHeights) {
    for (int r : kRangeRowHeights) {
      if (depths * r + lanes * laneMin <= free) {
        rangeHeight = r;
        laneHeight =
            lanes > 0 ? std::clamp((free - depths * r) / lanes, laneMin, kLaneMaxHeight) : laneMin;
        fits = true;
        break;
      }
    }
    if (fits) break;
  }
  for (TrackItem* track : trackItems_) track->setHeights(rangeHeight, laneHeight);
}

void TimelineView::setHeaderWidth(int pixels) {
  headerWidth_ = std::clamp(pixels, static_cast<int>(kMinHeaderWidth),
                            std::max(static_cast<int>(kMinHeaderWidth), width() / 2));
  syncWidth();
  timeline_.clamp();
  update();
}

void TimelineView::syncWidth() {
  timeline_.setWidth(width() - headerWidth_ - (vScroll_->isHidden() ? 0 : vScroll_->width()));
}

int TimelineView::rowsHeight() const {
  int h = 0;
  for (const TimelineItem* item : shown_) h += item->height();
  return h;
}

QRect TimelineView::rowsViewport() const {
  const int right = vScroll_->isHidden() ? width() : vScroll_->x();
  return QRect(0, kRulerHeight, right, std::max(0, height() - kRulerHeight - kLegendHeight));
}

void TimelineView::updateScrollBar() {
  const int viewport = std::max(0, height() - kRulerHeight - kLegendHeight);
  const int overflow = rowsHeight() - viewport;
  if (overflow > 0) {
    const int w = vScroll_->sizeHint().width();
    vScroll_->setGeometry(width() - w, kRulerHeight, w, viewport);
    vScroll_->setRange(0, overflow);
    vScroll_->setPageStep(viewport);
    vScroll_->setSingleStep(34);
    vScroll_->show();
  } else {
    vScroll_->setValue(0);
    vScroll_->hide();
  }
  syncWidth();
}

int TimelineView::itemTop(int item) const {
  int y = kRulerHeight - vScroll_->value();
  for (int i = 0; i < item && i < static_cast<int>(shown_.size()); ++i)
    y += shown_[static_cast<size_t>(i)]->height();
  return y;
}

void TimelineView::scrollToItem(int item) {
  if (item < 0 || item >= static_cast<int>(shown_.size())) return;
  const QRect viewport = rowsViewport();
  const int top = itemTop(item), bottom = top + shown_[static_cast<size_t>(item)]->height();
  if (top < viewport.top())
    vScroll_->setValue(vScroll_->value() - (viewport.top() - top));
  else if (bottom > viewport.bottom() + 1)
    vScroll_->setValue(vScroll_->value() + (bottom - viewport.bottom() - 1));
}

int TimelineView::shownIndexOfTrack(int track) const {
  if (track < 0 || track >= static_cast<int>(trackItems_.size())) return -1;
  const auto it = std::find(shown_.begin(), shown_.end(), trackItems_[static_cast<size_t>(track)]);
  return it == shown_.end() ? -1 : static_cast<int>(it - shown_.begin());
}

QRect TimelineView::groupHeaderRect(int group) const {
  if (group < 0 || group >= static_cast<int>(groupItems_.size())) return {};
  const auto it = std::find(shown_.begin(), shown_.end(), groupItems_[static_cast<size_t>(group)]);
  if (it == shown_.end()) return {};  // a device group of a collapsed rank
  const int row = static_cast<int>(it - shown_.begin());
  return QRect(0, itemTop(row), headerWidth_ + timeline_.width, GroupHeaderItem::kHeight);
}

QRect TimelineView::trackRect(int track) const {
  const int row = shownIndexOfTrack(track);
  if (row < 0) return {};
  return QRect(0, itemTop(row), headerWidth_ + timeline_.width,
               shown_[static_cast<size_t>(row)]->height());
}

QRect TimelineView::activityLaneRect(int track) const {
  const int row = shownIndexOfTrack(track);
  if (row < 0) return {};
  const TrackItem& item = *trackItems_[static_cast<size_t>(track)];
  if (!item.hasActivities()) return {};
  return QRect(headerWidth_, itemTop(row) + item.laneTop(), timeline_.width, item.laneHeight());
}

QRect TimelineView::rangeRowRect(int track, int depth) const {
  const int row = shownIndexOfTrack(track);
  if (row < 0) return {};
  const TrackItem& item = *trackItems_[static_cast<size_t>(track)];
  if (depth < 0 || depth >= item.rangeDepths()) return {};
  return QRect(headerWidth_, itemTop(row) + item.rangeRowTop(depth), timeline_.width,
               item.rangeRowHeight());
}

std::vector<HeaderLabel> TimelineView::headerLabels() const {
  std::vector<HeaderLabel> out;
  const QFontMetrics fm(paintFont());
  for (size_t i = 0; i < shown_.size(); ++i)
    out.push_back(shown_[i]->headerLabel(
        QRect(0, itemTop(static_cast<int>(i)), headerWidth_, shown_[i]->height()), fm));
  return out;
}

void TimelineView::windowChanged() {
  update();
  emit visibleWindowChanged(timeline_.viewStartNs, timeline_.viewEndNs);
}

void TimelineView::setSelection(std::optional<profiler::Interval> window) {
  if (window && window->end_ns < window->start_ns) std::swap(window->start_ns, window->end_ns);
  selection_ = window;
  update();
  if (selection_)
    emit selectionChanged(selection_->start_ns, selection_->end_ns);
  else
    emit selectionCleared();
}

void TimelineView::setHighlightedKernel(const QString& name) {
  highlighted_ = name.toStdString();
  instances_ = (document_ && !highlighted_.empty()) ? document_->instancesOf(highlighted_)
                                                    : std::vector<uint32_t>{};
  instancePosition_ = -1;
  focused_.reset();
  update();
  emit instanceFocused(0, static_cast<int>(instances_.size()));
}

bool TimelineView::focusInstance(int position) {
  if (instances_.empty()) return false;
  const int n = static_cast<int>(instances_.size());
  instancePosition_ = ((position % n) + n) % n;  // wraps around both ways
  focused_ = instances_[static_cast<size_t>(instancePosition_)];
  const profiler::Activity& a = document_->trace().activities[*focused_];
  // Centre on it; zoom in if it would be a sliver, out if it does not fit.
  const double duration = std::max<double>(static_cast<double>(a.duration_ns()), 1.0);
  double span = timeline_.span();
  if (duration > span * 0.8 || duration < span / 200) span = duration * 8;
  const double centre = (static_cast<double>(a.start_ns) + static_cast<double>(a.end_ns)) / 2;
  timeline_.showWindow(centre - span / 2, centre + span / 2);
  // ...and bring its track into view (expanding its group).
  const int track = trackOfActivity(*focused_);
  for (size_t g = 0; g < groupItems_.size(); ++g) {
    const auto& members = groupItems_[g]->group().tracks;
    if (groupItems_[g]->collapsed() &&
        std::find(members.begin(), members.end(), size_t(track)) != members.end())
      setGroupCollapsed(static_cast<int>(g), false);
  }
  scrollToItem(shownIndexOfTrack(track));
  windowChanged();
  emit instanceFocused(instancePosition_ + 1, n);
  return true;
}

bool TimelineView::focusNextInstance() { return focusInstance(instancePosition_ + 1); }
bool TimelineView::focusPreviousInstance() {
  return focusInstance(instancePosition_ < 0 ? -1 : instancePosition_ - 1);
}

void TimelineView::zoomIn() {
  timeline_.zoomAround(cursorX(), kKeyZoomFactor);
  windowChanged();
}
void TimelineView::zoomOut() {
  timeline_.zoomAround(cursorX(), 1 / kKeyZoomFactor);
  windowChanged();
}
void TimelineView::panLeft() {
  timeline_.panByPixels(timeline_.width * kKeyPanFraction);
  windowChanged();
}
void TimelineView::panRight() {
  timeline_.panByPixels(-timeline_.width * kKeyPanFraction);
  windowChanged();
}
void TimelineView::setTimeBounds(qint64 startNs, qint64 endNs) {
  timeline_.setBounds(startNs, endNs);
  windowChanged();
}

void TimelineView::showWindow(double startNs, double endNs) {
  timeline_.showWindow(startNs, endNs);
  windowChanged();
}

void TimelineView::fitAll() {
  timeline_.fitAll();
  windowChanged();
}

double TimelineView::cursorX() const {
  const QPoint pos = mapFromGlobal(QCursor::pos());
  if (rect().contains(pos) && pos.x() > headerWidth_) return pos.x() - headerWidth_;
  return timeline_.width / 2.0;
}

TimelinePaintContext TimelineView::paintContext() const {
  return {document_.get(), &timeline_, highlighted_, focused_, selected_};
}

QFont TimelineView::paintFont() const {
  QFont f = font();
  f.setPointSizeF(std::max(f.pointSizeF(), 9.0));
  return f;
}

int TimelineView::trackOfActivity(uint32_t activity) const {
  const profiler::Activity& a = document_->trace().activities[activity];
  const auto it = trackOfKey_.find({a.device, a.stream, a.rank});
  return it == trackOfKey_.end() ? -1 : it->second;
}

int TimelineView::trackOfRange(uint32_t range) const {
  const profiler::Range& r = document_->trace().ranges[range];
  const auto it = trackOfKey_.find({r.device, r.lane, r.rank});
  return it == trackOfKey_.end() ? -1 : it->second;
}

// A record in a collapsed group anchors on the header of the outermost collapsed group
// holding it (a rank's before its device's: groups list a rank before its devices).
static std::optional<QPointF> collapsedAnchor(const TimelineView& view, const TraceDocument& doc,
                                              int track, double x) {
  const auto& groups = doc.trackGroups();
  for (size_t g = 0; g < groups.size(); ++g)
    if (view.isGroupCollapsed(static_cast<int>(g)) &&
        std::find(groups[g].tracks.begin(), groups[g].tracks.end(), size_t(track)) !=
            groups[g].tracks.end()) {
      const QRect header = view.groupHeaderRect(static_cast<int>(g));
      return QPointF(x, header.center().y());
    }
  return std::nullopt;
}

std::optional<QPointF> TimelineView::activityAnchor(uint32_t activity) const {
  const int track = trackOfActivity(activity);
  if (track < 0) return std::nullopt;
  const double x =
      headerWidth_ +
      timeline_.mapTimeToX(static_cast<double>(document_->trace().activities[activity].start_ns));
  const QRect lane = activityLaneRect(track);
  if (lane.isEmpty()) return collapsedAnchor(*this, *document_, track, x);
  return QPointF(x, lane.center().y());
}

std::optional<QPointF> TimelineView::rangeAnchor(uint32_t range, int64_t atNs) const {
  const int track = trackOfRange(range);
  if (track < 0) return std::nullopt;
  const profiler::Range& r = document_->trace().ranges[range];
  const double t = static_cast<double>(std::clamp(atNs, r.start_ns, r.end_ns));
  const double x = headerWidth_ + timeline_.mapTimeToX(t);
  const auto& rows = document_->tracks()[static_cast<size_t>(track)].rangeRows;
  const auto depth =
      std::find(rows.begin(), rows.end(), document_->rangeRowOf(range)) - rows.begin();
  const QRect row = rangeRowRect(track, static_cast<int>(depth));
  if (row.isEmpty()) return collapsedAnchor(*this, *document_, track, x);
  return QPointF(x, row.bottom());
}

void TimelineView::selectActivity(std::optional<uint32_t> activity) {
  if (activity && (!document_ || *activity >= document_->trace().activities.size()))
    activity.reset();
  selected_ = activity;
  update();
}

std::vector<QLineF> TimelineView::flowLines() const {
  std::vector<QLineF> out;
  if (!document_ || !selected_) return out;
  // Launch -> kernel (correlation id), as Perfetto draws a Kineto trace's ac2g flows.
  for (const LaunchFlow& f : document_->launchFlowsOf(*selected_)) {
    const auto from = activityAnchor(f.launch), to = activityAnchor(f.kernel);
    if (from && to) out.emplace_back(*from, *to);
  }
  // Range -> device work launched in it (CUPTI external correlation).
  const profiler::Activity& a = document_->trace().activities[*selected_];
  if (const auto range = document_->rangeWithId(a.range_id)) {
    const auto from = rangeAnchor(*range, a.start_ns), to = activityAnchor(*selected_);
    if (from && to) out.emplace_back(*from, *to);
  }
  return out;
}

void TimelineView::paintFlows(QPainter& p) {
  paintArrows(p, flowLines(), palette::kFocus);
  paintArrows(p, dependencyLines(), palette::kDependency);
}

void TimelineView::paintArrows(QPainter& p, const std::vector<QLineF>& lines,
                               const QColor& colour) {
  if (lines.empty()) return;
  p.save();
  p.setRenderHint(QPainter::Antialiasing);
  p.setClipRect(rowsViewport().adjusted(headerWidth_, 0, 0, 0));
  for (const QLineF& line : lines) {
    // A gentle curve, so arrows between records at the same time stay visible.
    QPainterPath path(line.p1());
    const double bend = std::max(30.0, std::abs(line.dx()) / 2);
    path.cubicTo(line.p1() + QPointF(bend, 0), line.p2() - QPointF(bend, 0), line.p2());
    p.setPen(QPen(colour, 1.6));
    p.setBrush(Qt::NoBrush);
    p.drawPath(path);
    // The head points along the curve's last tangent (from its last control point).
    const QLineF tangent(line.p2() - QPointF(bend, 0), line.p2());
    const double angle = std::atan2(tangent.dy(), tangent.dx());
    const QPointF tip = line.p2();
    const QPointF left = tip - QPointF(std::cos(angle - 0.45) * 9, std::sin(angle - 0.45) * 9);
    const QPointF right = tip - QPointF(std::cos(angle + 0.45) * 9, std::sin(angle + 0.45) * 9);
    p.setBrush(colour);
    p.drawPolygon(QPolygonF({tip, left, right}));
    p.drawEllipse(line.p1(), 2.5, 2.5);
  }
  p.restore();
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette::kCanvas);
  p.setFont(paintFont());
  if (!document_) {
    p.setPen(palette::kSubtleText);
    p.drawText(rect(), Qt::AlignCenter, tr("Open a tunescope trace (File → Open, Ctrl+O)"));
    return;
  }
  const TimelinePaintContext ctx = paintContext();
  // Rows scroll under the fixed ruler and legend; only those in view are drawn.
  const QRect viewport = rowsViewport();
  p.save();
  p.setClipRect(viewport);
  int y = kRulerHeight - vScroll_->value();
  int trackNumber = 0;
  for (const TimelineItem* item : shown_) {
    const bool isTrack = dynamic_cast<const TrackItem*>(item) != nullptr;
    if (y + item->height() > viewport.top() && y <= viewport.bottom()) {
      const QRect header(0, y, headerWidth_, item->height());
      const QRect area(headerWidth_, y, timeline_.width, item->height());
      item->drawBackground(p, header, area, trackNumber % 2 == 1);
      p.save();
      p.setClipRect(area.intersected(viewport));
      item->drawContents(p, area, ctx);
      p.restore();
    }
    trackNumber += isTrack ? 1 : 0;
    y += item->height();
  }
  // Vertical grid lines at the ruler ticks, behind nothing but readable.
  p.setPen(QColor(255, 255, 255, 18));
  const int gridBottom = std::min(y, viewport.bottom());
  for (const RulerTick& t : rulerTicks(timeline_))
    p.drawLine(QPointF(headerWidth_ + t.x, kRulerHeight), QPointF(headerWidth_ + t.x, gridBottom));
  p.restore();
  // The label column's edge, the handle that resizes it.
  p.setPen(palette::kGrid);
  p.drawLine(headerWidth_ - 1, kRulerHeight, headerWidth_ - 1, height() - kLegendHeight);
  paintCriticalPath(p);
  paintFlows(p);
  paintSelection(p);
  paintRuler(p);
  paintLegend(p);
}

void TimelineView::paintRuler(QPainter& p) {
  const QRect ruler(0, 0, width(), kRulerHeight);
  p.fillRect(ruler, palette::kRuler);
  p.setPen(palette::kHeaderText);
  p.drawText(QRect(10, 0, headerWidth_ - 16, kRulerHeight), Qt::AlignVCenter | Qt::AlignLeft,
             tr("view %1").arg(formatDuration(timeline_.span())));
  p.save();
  p.setClipRect(QRect(headerWidth_, 0, timeline_.width, kRulerHeight));
  const double minor = rulerStepNs(timeline_, 90) / 5;
  p.setPen(palette::kSubtleText);
  for (double t = std::ceil((timeline_.viewStartNs - timeline_.boundsStartNs) / minor) * minor +
                  timeline_.boundsStartNs;
       t <= timeline_.viewEndNs && minor > 0; t += minor) {
    const double x = headerWidth_ + timeline_.mapTimeToX(t);
    p.drawLine(QPointF(x, kRulerHeight - 5), QPointF(x, kRulerHeight));
  }
  for (const RulerTick& t : rulerTicks(timeline_)) {
    const double x = headerWidth_ + t.x;
    p.setPen(palette::kHeaderText);
    p.drawLine(QPointF(x, kRulerHeight - 12), QPointF(x, kRulerHeight));
    // A label cut by the right edge reads as a wrong number: leave it out.
    if (x + 4 + p.fontMetrics().horizontalAdvance(t.label) < width())
      p.drawText(QRectF(x + 4, 2, 120, kRulerHeight - 10), Qt::AlignLeft | Qt::AlignVCenter,
                 t.label);
  }
  p.restore();
  p.setPen(palette::kGrid);
  p.drawLine(0, kRulerHeight - 1, width(), kRulerHeight - 1);
}

void TimelineView::paintLegend(QPainter& p) {
  // The families present in this trace, so colours need no guessing.
  std::set<KernelFamily> present;
  for (const profiler::KernelStats& k : document_->kernelTable())
    present.insert(classifyKernel(k.kind, k.name).family);
  const QRect bar(0, height() - kLegendHeight, width(), kLegendHeight);
  p.fillRect(bar, palette::kHeader);
  const QFontMetrics fm(p.font());
  int x = 10;
  for (KernelFamily f : present) {
    const QColor c = palette::kernelColor({f, ConvAlgorithmFamily::direct});
    p.fillRect(QRect(x, bar.top() + 8, 12, 10), c);
    x += 17;
    p.setPen(palette::kHeaderText);
    const QString label = familyLabel(f);
    p.drawText(QPoint(x, bar.top() + 17), label);
    x += fm.horizontalAdvance(label) + 16;
  }
  const QString keys = tr(
      "ctrl+wheel/W/S zoom · wheel scroll · drag/shift+wheel/A/D pan · F fit · shift+drag select");
  if (x + fm.horizontalAdvance(keys) + 20 < width()) {  // only where it fits beside the legend
    p.setPen(palette::kSubtleText);
    p.drawText(bar.adjusted(0, 0, -10, 0), Qt::AlignRight | Qt::AlignVCenter, keys);
  }
}

void TimelineView::paintSelection(QPainter& p) {
  if (!selection_) return;
  const double x0 = headerWidth_ + timeline_.mapTimeToX(static_cast<double>(selection_->start_ns));
  const double x1 = headerWidth_ + timeline_.mapTimeToX(static_cast<double>(selection_->end_ns));
  const QRectF r(QPointF(std::max(x0, double(headerWidth_)), 0),
                 QPointF(std::min(x1, double(width())), height() - kLegendHeight));
  if (r.width() <= 0) return;
  QColor fill = palette::kSelection;
  fill.setAlpha(45);
  p.fillRect(r, fill);
  p.setPen(QPen(palette::kSelection, 1));
  p.drawLine(QPointF(x0, 0), QPointF(x0, r.bottom()));
  p.drawLine(QPointF(x1, 0), QPointF(x1, r.bottom()));
  const QString label = formatDuration(static_cast<double>(selection_->duration_ns()));
  const QRectF labelRect(r.center().x() - 50, kRulerHeight + 2, 100, 18);
  p.fillRect(labelRect, palette::kSelection);
  p.setPen(Qt::black);
  p.drawText(labelRect, Qt::AlignCenter, label);
}

void TimelineView::resizeEvent(QResizeEvent*) {
  headerWidth_ = std::clamp(headerWidth_, static_cast<int>(kMinHeaderWidth),
                            std::max(static_cast<int>(kMinHeaderWidth), width() / 2));
  layoutLanes();
  updateScrollBar();
  timeline_.clamp();
}

void TimelineView::wheelEvent(QWheelEvent* e) {
  const double x = e->position().x() - headerWidth_;
  const QPoint delta = e->angleDelta();
  if (e->modifiers() & Qt::ControlModifier) {
    const double steps = (delta.y() != 0 ? delta.y() : delta.x()) / 120.0;
    timeline_.zoomAround(std::clamp(x, 0.0, double(timeline_.width)), std::pow(1.25, steps));
    windowChanged();
  } else if ((e->modifiers() & Qt::ShiftModifier) || (delta.y() == 0 && delta.x() != 0)) {
    // Some platforms turn shift+wheel into a horizontal delta themselves.
    timeline_.panByPixels((delta.x() != 0 ? delta.x() : delta.y()) / 4.0);
    windowChanged();
  } else {
    vScroll_->setValue(vScroll_->value() -
                       static_cast<int>(std::lround(delta.y() / 120.0 * kWheelScrollPixels)));
  }
  e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton && nearHeaderEdge(e->position().x())) {
    drag_ = Drag::resizeHeader;
    return;
  }
  // A click on a group's label collapses or expands it (in the time area a press
  // still starts a pan or a selection).
  if (e->button() == Qt::LeftButton && e->position().x() < headerWidth_ &&
      rowsViewport().contains(e->position().toPoint())) {
    for (size_t g = 0; g < groupItems_.size(); ++g)
      if (groupHeaderRect(static_cast<int>(g)).contains(e->position().toPoint())) {
        setGroupCollapsed(static_cast<int>(g), !groupItems_[g]->collapsed());
        drag_ = Drag::none;
        return;
      }
  }
  dragOrigin_ = e->position();
  dragLastX_ = e->position().x();
  dragMoved_ = false;
  const bool select = e->button() == Qt::RightButton ||
                      (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier));
  drag_ = select ? Drag::select : e->button() == Qt::LeftButton ? Drag::pan : Drag::none;
  if (drag_ == Drag::pan) setCursor(Qt::ClosedHandCursor);
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
  const double x = e->position().x();
  if (drag_ == Drag::resizeHeader) {
    setHeaderWidth(static_cast<int>(x));
    return;
  }
  if (drag_ == Drag::none) {
    if (nearHeaderEdge(x))
      setCursor(Qt::SplitHCursor);
    else
      unsetCursor();
  }
  if (drag_ != Drag::none && std::abs(x - dragOrigin_.x()) > 2) dragMoved_ = true;
  if (drag_ == Drag::pan) {
    timeline_.panByPixels(x - dragLastX_);
    dragLastX_ = x;
    windowChanged();
    return;
  }
  if (drag_ == Drag::select) {
    if (!dragMoved_) return;
    const auto t0 = static_cast<int64_t>(timeline_.mapXToTime(dragOrigin_.x() - headerWidth_));
    const auto t1 = static_cast<int64_t>(
        timeline_.mapXToTime(std::max(x, double(headerWidth_)) - headerWidth_));
    selection_ = profiler::Interval{std::min(t0, t1), std::max(t0, t1)};
    update();
    return;
  }
  // Hover: tooltip of the record (or label) under the cursor.
  const QString tip = toolTipAt(e->position().toPoint());
  if (tip.isEmpty()) return QToolTip::hideText();
  QToolTip::showText(e->globalPosition().toPoint(), tip, this);
}

QString TimelineView::toolTipAt(QPoint pos) const {
  if (!document_ || !rowsViewport().contains(pos)) return {};
  const int row = [&] {
    int y = kRulerHeight - vScroll_->value();
    for (size_t i = 0; i < shown_.size(); ++i) {
      if (pos.y() >= y && pos.y() < y + shown_[i]->height()) return static_cast<int>(i);
      y += shown_[i]->height();
    }
    return -1;
  }();
  if (row < 0) return {};
  const TimelineItem& item = *shown_[static_cast<size_t>(row)];
  if (pos.x() < headerWidth_) {
    // The label column: the full label and what it holds, whether or not it was elided.
    const QString sub = item.subLabel();
    return QStringLiteral("<b>%1</b>%2")
        .arg(item.label().toHtmlEscaped(),
             sub.isEmpty() ? QString() : QStringLiteral("<br>") + sub.toHtmlEscaped());
  }
  if (auto hit = item.hitTest(pos.x() - headerWidth_, pos.y() - itemTop(row), paintContext()))
    return hit->tooltipHtml;
  return {};
}

bool TimelineView::event(QEvent* e) {
  // Keyboard-less tooltip requests (and accessibility tools) get the same text as hovering.
  if (e->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(e);
    const QString tip = toolTipAt(help->pos());
    if (tip.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(help->globalPos(), tip, this);
    return true;
  }
  return QWidget::event(e);
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
  if (drag_ == Drag::pan && !dragMoved_ && document_) {
    // A click (no drag) selects the activity under it, or clears the selection.
    std::optional<uint32_t> hitActivity;
    int y = kRulerHeight - vScroll_->value();
    for (size_t i = 0; i < shown_.size(); ++i) {
      const int h = shown_[i]->height();
      if (e->position().x() >= headerWidth_ && e->position().y() >= y &&
          e->position().y() < y + h) {
        if (auto hit = shown_[i]->hitTest(e->position().x() - headerWidth_, e->position().y() - y,
                                          paintContext()))
          hitActivity = hit->activity;
        break;
      }
      y += h;
    }
    selectActivity(hitActivity);
  }
  if (drag_ == Drag::select) {
    if (dragMoved_ && selection_)
      setSelection(selection_);
    else
      setSelection(std::nullopt);
  }
  drag_ = Drag::none;
  unsetCursor();
}

void TimelineView::leaveEvent(QEvent*) { QToolTip::hideText(); }

void TimelineView::keyPressEvent(QKeyEvent* e) {
  switch (e->key()) {
    case Qt::Key_W:
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoomIn(); break;
    case Qt::Key_S:
    case Qt::Key_Minus: zoomOut(); break;
    case Qt::Key_A:
    case Qt::Key_Left: panLeft(); break;
    case Qt::Key_D:
    case Qt::Key_Right: panRight(); break;
    case Qt::Key_F:
    case Qt::Key_Home: fitAll(); break;
    case Qt::Key_N: focusNextInstance(); break;
    case Qt::Key_P: focusPreviousInstance(); break;
    case Qt::Key_Escape: setSelection(std::nullopt); break;
    case Qt::Key_Up: vScroll_->triggerAction(QAbstractSlider::SliderSingleStepSub); break;
    case Qt::Key_Down: vScroll_->triggerAction(QAbstractSlider::SliderSingleStepAdd); break;
    case Qt::Key_PageUp: vScroll_->triggerAction(QAbstractSlider::SliderPageStepSub); break;
    case Qt::Key_PageDown: vScroll_->triggerAction(QAbstractSlider::SliderPageStepAdd); break;
    default: QWidget::keyPressEvent(e); return;
  }
  e->accept();
}

}  // namespace tunescope::gui
