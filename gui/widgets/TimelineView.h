// The timeline canvas: time ruler, range rows and activity lanes (TimelineItems),
// with wheel/drag/keyboard navigation, hover tooltips, rubber-band selection and
// highlighting/stepping through the instances of one kernel. Rows that do not fit
// scroll vertically under the fixed ruler. The wheel follows Perfetto and Nsight
// Systems: plain wheel scrolls the rows, Ctrl+wheel zooms around the cursor,
// Shift+wheel (or a horizontal swipe) pans.
#pragma once

#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "models/TimelineData.h"
#include "models/TraceDocument.h"
#include "widgets/TimelineItem.h"

class QScrollBar;

namespace tunescope::gui {

class TimelineView : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kHeaderWidth = 190;
  static constexpr int kRulerHeight = 30;
  static constexpr int kLegendHeight = 26;

  explicit TimelineView(QWidget* parent = nullptr);

  void setDocument(TraceDocumentPtr document);
  const TimelineData& timeline() const { return timeline_; }
  std::optional<profiler::Interval> selection() const { return selection_; }
  void setSelection(std::optional<profiler::Interval> window);

  // Highlights every instance of `name` (empty: none) and resets the stepping.
  void setHighlightedKernel(const QString& name);
  // Centres the view on the next/previous instance of the highlighted kernel.
  bool focusNextInstance();
  bool focusPreviousInstance();
  std::optional<uint32_t> focusedActivity() const { return focused_; }

  void zoomIn();
  void zoomOut();
  void panLeft();
  void panRight();
  void fitAll();
  void showWindow(double startNs, double endNs);
  // Widens the navigable time range beyond the document's extent (and shows all of it):
  // the Compare view gives two traces the same span so that their windows stay aligned.
  void setTimeBounds(qint64 startNs, qint64 endNs);

  QSize sizeHint() const override { return {1200, 420}; }
  // The vertical scroll bar: shown only when the rows are taller than the view.
  QScrollBar* verticalScrollBar() const { return vScroll_; }
  // Scrolls the rows so that `item` (ranges first, then lanes) is in view.
  void scrollToItem(int item);
  // Top of `item` in widget coordinates at the current scroll position.
  int itemTop(int item) const;

 signals:
  void selectionChanged(qint64 startNs, qint64 endNs);
  void selectionCleared();
  void visibleWindowChanged(double startNs, double endNs);
  // position is 1-based among `count` instances.
  void instanceFocused(int position, int count);

 protected:
  void paintEvent(QPaintEvent*) override;
  void resizeEvent(QResizeEvent*) override;
  void wheelEvent(QWheelEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;
  void mouseReleaseEvent(QMouseEvent*) override;
  void keyPressEvent(QKeyEvent*) override;
  void leaveEvent(QEvent*) override;

 private:
  void rebuildItems();
  void layoutLanes();  // stretches activity lanes over the free height
  void syncWidth();
  void updateScrollBar();
  int rowsHeight() const;  // of all rows, with the gap between ranges and lanes
  QRect rowsViewport() const;  // between ruler and legend, left of the scroll bar
  void windowChanged();
  bool focusInstance(int position);
  double cursorX() const;  // in canvas coordinates; the centre when outside
  TimelinePaintContext paintContext() const;
  void paintRuler(QPainter& p);
  void paintLegend(QPainter& p);
  void paintSelection(QPainter& p);

  TraceDocumentPtr document_;
  TimelineData timeline_;
  std::vector<std::unique_ptr<TimelineItem>> items_;
  int rangeItemCount_ = 0;
  QScrollBar* vScroll_;

  std::optional<profiler::Interval> selection_;
  std::string highlighted_;
  std::vector<uint32_t> instances_;
  int instancePosition_ = -1;
  std::optional<uint32_t> focused_;

  enum class Drag { none, pan, select } drag_ = Drag::none;
  QPointF dragOrigin_;
  double dragLastX_ = 0;
  bool dragMoved_ = false;
};

}  // namespace tunescope::gui
