// The timeline canvas: time ruler, then per device a group header and its tracks (each
// lane's nested ranges above its activities), with wheel/drag/keyboard navigation,
// hover tooltips, rubber-band selection, click selection with its flows drawn as
// arrows, and highlighting/stepping through the instances of one kernel. Groups
// collapse and expand (remembered per trace kind); the label column is resizable by
// dragging its edge. Rows shrink (within limits) so that every lane fits the first
// screen; those that still do not fit scroll vertically under the fixed ruler. The
// wheel follows Perfetto and Nsight Systems: plain wheel scrolls the rows, Ctrl+wheel
// zooms around the cursor, Shift+wheel (or a horizontal swipe) pans.
#pragma once

#include <QWidget>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "models/CriticalPathModel.h"
#include "models/TimelineData.h"
#include "models/TraceDocument.h"
#include "widgets/GroupHeaderItem.h"
#include "widgets/TimelineItem.h"
#include "widgets/TrackItem.h"

class QScrollBar;

namespace tunescope::gui {

class TimelineView : public QWidget {
  Q_OBJECT
 public:
  // The label column's default (and least default) width; it widens to the labels up
  // to kMaxDefaultHeaderWidth, and the user drags it anywhere in [kMinHeaderWidth, half the view].
  static constexpr int kHeaderWidth = 190;
  static constexpr int kMaxDefaultHeaderWidth = 320;
  static constexpr int kMinHeaderWidth = 80;
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
  // Scrolls the rows so that shown row `item` (group headers and tracks, top down) is in view.
  void scrollToItem(int item);
  // Top of shown row `item` in widget coordinates at the current scroll position
  // (item == shownRowCount(): the bottom of the last row).
  int itemTop(int item) const;
  int shownRowCount() const { return static_cast<int>(shown_.size()); }

  int headerWidth() const { return headerWidth_; }
  void setHeaderWidth(int pixels);
  // Widget-coordinate geometry at the current scroll position; empty when the track
  // (or group) is not shown because its group is collapsed.
  QRect groupHeaderRect(int group) const;
  QRect trackRect(int track) const;                // whole track, label column included
  QRect activityLaneRect(int track) const;         // its activities, time area only
  QRect rangeRowRect(int track, int depth) const;  // one depth of its range stack, time area only
  bool isGroupCollapsed(int group) const;
  // Collapses/expands a device or rank group and remembers it for traces of this kind.
  void setGroupCollapsed(int group, bool collapsed);
  // The label column of every shown row, as painted.
  std::vector<HeaderLabel> headerLabels() const;
  // What hovering `pos` shows (rich text); empty where nothing is.
  QString toolTipAt(QPoint pos) const;

  // The selected activity: outlined, with its flows (launch -> kernel, range -> kernel)
  // drawn as arrows.
  void selectActivity(std::optional<uint32_t> activity);
  std::optional<uint32_t> selectedActivity() const { return selected_; }
  // The arrows of the selected activity's flows, widget coordinates (from -> to).
  std::vector<QLineF> flowLines() const;

  // The critical path of `analyze` (TimelineCriticalPath.cpp): its records outlined when
  // shown, and the selected record's dependencies (event and host waits, launches)
  // drawn as arrows from the end of what it waited for. Null: none.
  void setCriticalPath(CriticalPathModelPtr model);
  const CriticalPathModelPtr& criticalPath() const { return path_; }
  void setCriticalPathShown(bool shown);
  bool criticalPathShown() const { return pathShown_; }
  // Widget-coordinate boxes of the path's records in the visible window (as painted).
  std::vector<QRectF> criticalPathRects() const;
  // The selected activity's dependency arrows (from the end of the one waited for).
  std::vector<QLineF> dependencyLines() const;

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
  bool event(QEvent*) override;

 private:
  void rebuildItems();
  void rebuildShown();                     // the rows to show after a collapse or expand
  void layoutLanes();                      // sizes range rows and lanes to the free height
  int shownIndexOfTrack(int track) const;  // -1 when collapsed
  int trackOfActivity(uint32_t activity) const;
  int trackOfRange(uint32_t range) const;
  // Where a flow meets a record: its start on its row (the group header when collapsed).
  std::optional<QPointF> activityAnchor(uint32_t activity) const;
  std::optional<QPointF> rangeAnchor(uint32_t range, int64_t atNs) const;
  void paintFlows(QPainter& p);
  void paintArrows(QPainter& p, const std::vector<QLineF>& lines, const QColor& colour);
  void paintCriticalPath(QPainter& p);
  std::optional<QRectF> activityBox(uint32_t activity) const;
  bool nearHeaderEdge(double x) const { return std::abs(x - headerWidth_) <= 4; }
  QString settingsKey() const;
  void syncWidth();
  void updateScrollBar();
  int rowsHeight() const;      // of all shown rows
  QRect rowsViewport() const;  // between ruler and legend, left of the scroll bar
  void windowChanged();
  bool focusInstance(int position);
  double cursorX() const;  // in canvas coordinates; the centre when outside
  TimelinePaintContext paintContext() const;
  QFont paintFont() const;  // the widget's font, at least 9 pt
  void paintRuler(QPainter& p);
  void paintLegend(QPainter& p);
  void paintSelection(QPainter& p);

  TraceDocumentPtr document_;
  TimelineData timeline_;
  std::vector<std::unique_ptr<TimelineItem>> items_;  // owns the headers and tracks
  std::vector<GroupHeaderItem*> groupItems_;          // per TrackGroup
  std::vector<TrackItem*> trackItems_;                // per Track
  std::vector<TimelineItem*> shown_;             // top down: headers, tracks of expanded groups
  std::vector<int> trackOfLane_;                 // per ActivityLane
  std::map<profiler::LaneKey, int> trackOfKey_;  // (rank, device, lane) -> track
  int headerWidth_ = kHeaderWidth;
  QScrollBar* vScroll_;
  std::optional<uint32_t> selected_;
  CriticalPathModelPtr path_;
  bool pathShown_ = true;

  std::optional<profiler::Interval> selection_;
  std::string highlighted_;
  std::vector<uint32_t> instances_;
  int instancePosition_ = -1;
  std::optional<uint32_t> focused_;

  enum class Drag { none, pan, select, resizeHeader } drag_ = Drag::none;
  QPointF dragOrigin_;
  double dragLastX_ = 0;
  bool dragMoved_ = false;
};

}  // namespace tunescope::gui
