// Painting and interaction of the timeline canvas.
#include "widgets/TimelineView.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
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

namespace tunescope::gui {

namespace {
constexpr double kKeyZoomFactor = 1.5;
constexpr double kKeyPanFraction = 0.15;
constexpr int kRangeLaneGap = 6;
constexpr double kWheelScrollPixels = 60;  // per 120-unit wheel notch
}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent), vScroll_(new QScrollBar(Qt::Vertical, this)) {
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
  rebuildItems();
  syncWidth();
  const profiler::Interval extent = document_ ? document_->extent() : profiler::Interval{0, 1};
  timeline_.setBounds(extent.start_ns, extent.end_ns);
  windowChanged();
}

void TimelineView::rebuildItems() {
  items_.clear();
  rangeItemCount_ = 0;
  if (!document_) return;
  for (const RangeRow& row : document_->rangeRows()) items_.push_back(std::make_unique<RangeRowItem>(row));
  rangeItemCount_ = static_cast<int>(items_.size());
  for (const ActivityLane& lane : document_->lanes()) items_.push_back(std::make_unique<ActivityLaneItem>(lane));
  layoutLanes();
  vScroll_->setValue(0);
  updateScrollBar();
  updateGeometry();
}

void TimelineView::layoutLanes() {
  const int lanes = static_cast<int>(items_.size()) - rangeItemCount_;
  if (lanes <= 0) return;
  int used = kRulerHeight + kLegendHeight + kRangeLaneGap;
  for (int i = 0; i < rangeItemCount_; ++i) used += items_[static_cast<size_t>(i)]->height();
  const int each = std::clamp((height() - used) / lanes, 34, 72);
  for (size_t i = static_cast<size_t>(rangeItemCount_); i < items_.size(); ++i)
    static_cast<ActivityLaneItem&>(*items_[i]).setHeight(each);
}

void TimelineView::syncWidth() {
  timeline_.setWidth(width() - kHeaderWidth - (vScroll_->isHidden() ? 0 : vScroll_->width()));
}

int TimelineView::rowsHeight() const {
  int h = 0;
  for (const auto& item : items_) h += item->height();
  if (rangeItemCount_ > 0 && static_cast<int>(items_.size()) > rangeItemCount_) h += kRangeLaneGap;
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
  for (int i = 0; i < item && i < static_cast<int>(items_.size()); ++i) y += items_[static_cast<size_t>(i)]->height();
  if (rangeItemCount_ > 0 && item >= rangeItemCount_) y += kRangeLaneGap;
  return y;
}

void TimelineView::scrollToItem(int item) {
  if (item < 0 || item >= static_cast<int>(items_.size())) return;
  const QRect viewport = rowsViewport();
  const int top = itemTop(item), bottom = top + items_[static_cast<size_t>(item)]->height();
  if (top < viewport.top())
    vScroll_->setValue(vScroll_->value() - (viewport.top() - top));
  else if (bottom > viewport.bottom() + 1)
    vScroll_->setValue(vScroll_->value() + (bottom - viewport.bottom() - 1));
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
  instances_ = (document_ && !highlighted_.empty()) ? document_->instancesOf(highlighted_) : std::vector<uint32_t>{};
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
  // ...and bring its lane into view.
  const auto& lanes = document_->lanes();
  const profiler::LaneKey key{a.device, a.stream};
  for (size_t i = 0; i < lanes.size(); ++i)
    if (lanes[i].key == key) scrollToItem(rangeItemCount_ + static_cast<int>(i));
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
  if (rect().contains(pos) && pos.x() > kHeaderWidth) return pos.x() - kHeaderWidth;
  return timeline_.width / 2.0;
}

TimelinePaintContext TimelineView::paintContext() const {
  return {document_.get(), &timeline_, highlighted_, focused_};
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette::kCanvas);
  QFont font = p.font();
  font.setPointSizeF(std::max(font.pointSizeF(), 9.0));
  p.setFont(font);
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
  for (size_t i = 0; i < items_.size(); ++i) {
    if (static_cast<int>(i) == rangeItemCount_ && rangeItemCount_ > 0) y += kRangeLaneGap;
    const TimelineItem& item = *items_[i];
    if (y + item.height() > viewport.top() && y <= viewport.bottom()) {
      const QRect header(0, y, kHeaderWidth, item.height());
      const QRect area(kHeaderWidth, y, timeline_.width, item.height());
      item.drawBackground(p, header, area, i % 2 == 1);
      p.save();
      p.setClipRect(area.intersected(viewport));
      item.drawContents(p, area, ctx);
      p.restore();
    }
    y += item.height();
  }
  // Vertical grid lines at the ruler ticks, behind nothing but readable.
  p.setPen(QColor(255, 255, 255, 18));
  const int gridBottom = std::min(y, viewport.bottom());
  for (const RulerTick& t : rulerTicks(timeline_))
    p.drawLine(QPointF(kHeaderWidth + t.x, kRulerHeight), QPointF(kHeaderWidth + t.x, gridBottom));
  p.restore();
  paintSelection(p);
  paintRuler(p);
  paintLegend(p);
}

void TimelineView::paintRuler(QPainter& p) {
  const QRect ruler(0, 0, width(), kRulerHeight);
  p.fillRect(ruler, palette::kRuler);
  p.setPen(palette::kHeaderText);
  p.drawText(QRect(10, 0, kHeaderWidth - 16, kRulerHeight), Qt::AlignVCenter | Qt::AlignLeft,
             tr("view %1").arg(formatDuration(timeline_.span())));
  p.save();
  p.setClipRect(QRect(kHeaderWidth, 0, timeline_.width, kRulerHeight));
  const double minor = rulerStepNs(timeline_, 90) / 5;
  p.setPen(palette::kSubtleText);
  for (double t = std::ceil((timeline_.viewStartNs - timeline_.boundsStartNs) / minor) * minor + timeline_.boundsStartNs;
       t <= timeline_.viewEndNs && minor > 0; t += minor) {
    const double x = kHeaderWidth + timeline_.mapTimeToX(t);
    p.drawLine(QPointF(x, kRulerHeight - 5), QPointF(x, kRulerHeight));
  }
  for (const RulerTick& t : rulerTicks(timeline_)) {
    const double x = kHeaderWidth + t.x;
    p.setPen(palette::kHeaderText);
    p.drawLine(QPointF(x, kRulerHeight - 12), QPointF(x, kRulerHeight));
    // A label cut by the right edge reads as a wrong number: leave it out.
    if (x + 4 + p.fontMetrics().horizontalAdvance(t.label) < width())
      p.drawText(QRectF(x + 4, 2, 120, kRulerHeight - 10), Qt::AlignLeft | Qt::AlignVCenter, t.label);
  }
  p.restore();
  p.setPen(palette::kGrid);
  p.drawLine(0, kRulerHeight - 1, width(), kRulerHeight - 1);
}

void TimelineView::paintLegend(QPainter& p) {
  // The families present in this trace, so colours need no guessing.
  std::set<KernelFamily> present;
  for (const profiler::KernelStats& k : document_->kernelTable()) present.insert(classifyKernel(k.kind, k.name).family);
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
  const QString keys = tr("ctrl+wheel/W/S zoom · wheel scroll · drag/shift+wheel/A/D pan · F fit · shift+drag select");
  if (x + fm.horizontalAdvance(keys) + 20 < width()) {  // only where it fits beside the legend
    p.setPen(palette::kSubtleText);
    p.drawText(bar.adjusted(0, 0, -10, 0), Qt::AlignRight | Qt::AlignVCenter, keys);
  }
}

void TimelineView::paintSelection(QPainter& p) {
  if (!selection_) return;
  const double x0 = kHeaderWidth + timeline_.mapTimeToX(static_cast<double>(selection_->start_ns));
  const double x1 = kHeaderWidth + timeline_.mapTimeToX(static_cast<double>(selection_->end_ns));
  const QRectF r(QPointF(std::max(x0, double(kHeaderWidth)), 0), QPointF(std::min(x1, double(width())), height() - kLegendHeight));
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
  layoutLanes();
  updateScrollBar();
  timeline_.clamp();
}

void TimelineView::wheelEvent(QWheelEvent* e) {
  const double x = e->position().x() - kHeaderWidth;
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
    vScroll_->setValue(vScroll_->value() - static_cast<int>(std::lround(delta.y() / 120.0 * kWheelScrollPixels)));
  }
  e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
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
  if (drag_ != Drag::none && std::abs(x - dragOrigin_.x()) > 2) dragMoved_ = true;
  if (drag_ == Drag::pan) {
    timeline_.panByPixels(x - dragLastX_);
    dragLastX_ = x;
    windowChanged();
    return;
  }
  if (drag_ == Drag::select) {
    if (!dragMoved_) return;
    const auto t0 = static_cast<int64_t>(timeline_.mapXToTime(dragOrigin_.x() - kHeaderWidth));
    const auto t1 = static_cast<int64_t>(timeline_.mapXToTime(std::max(x, double(kHeaderWidth)) - kHeaderWidth));
    selection_ = profiler::Interval{std::min(t0, t1), std::max(t0, t1)};
    update();
    return;
  }
  // Hover: tooltip of the record under the cursor.
  if (!document_ || x < kHeaderWidth || !rowsViewport().contains(e->position().toPoint()))
    return QToolTip::hideText();
  int y = kRulerHeight - vScroll_->value();
  const TimelinePaintContext ctx = paintContext();
  for (size_t i = 0; i < items_.size(); ++i) {
    if (static_cast<int>(i) == rangeItemCount_ && rangeItemCount_ > 0) y += kRangeLaneGap;
    const int h = items_[i]->height();
    if (e->position().y() >= y && e->position().y() < y + h) {
      if (auto hit = items_[i]->hitTest(x - kHeaderWidth, ctx)) {
        QToolTip::showText(e->globalPosition().toPoint(), hit->tooltipHtml, this);
        return;
      }
      break;
    }
    y += h;
  }
  QToolTip::hideText();
}

void TimelineView::mouseReleaseEvent(QMouseEvent*) {
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
    case Qt::Key_W: case Qt::Key_Plus: case Qt::Key_Equal: zoomIn(); break;
    case Qt::Key_S: case Qt::Key_Minus: zoomOut(); break;
    case Qt::Key_A: case Qt::Key_Left: panLeft(); break;
    case Qt::Key_D: case Qt::Key_Right: panRight(); break;
    case Qt::Key_F: case Qt::Key_Home: fitAll(); break;
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
