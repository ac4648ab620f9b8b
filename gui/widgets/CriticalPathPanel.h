// The critical-path dock: the median step's critical path broken down by what bounds it
// (compute, launch/host overhead, data wait, synchronisation, copies, idle), a switch
// for its outline on the timeline, and analyze's findings ranked by gain; activating a
// finding shows its step on the timeline and selects its evidence (whose dependency
// arrows the timeline then draws).
#pragma once

#include <QDockWidget>

#include "models/CriticalPathModel.h"
#include "models/TraceDocument.h"

class QCheckBox;
class QLabel;
class QListWidget;
class QTableWidget;

namespace tunescope::gui {

class TimelineView;

class CriticalPathPanel : public QDockWidget {
  Q_OBJECT
 public:
  explicit CriticalPathPanel(QWidget* parent = nullptr);

  // Analyses the document (on this thread; CriticalPathModel bounds the size) and
  // hands the result to the attached timeline.
  void setDocument(const TraceDocumentPtr& document);
  // The timeline that draws the path and receives the finding selections.
  void attach(TimelineView* timeline);
  const CriticalPathModelPtr& model() const { return model_; }
  // Shows finding `index` (0-based) on the timeline: its step's window, its evidence
  // highlighted and the first evidence record on the path selected (without evidence:
  // the path's first record that waited for another lane).
  void activateFinding(int index);

  QLabel* titleLabel() const { return title_; }
  QCheckBox* highlightBox() const { return highlight_; }
  QTableWidget* breakdownTable() const { return breakdown_; }
  QListWidget* findingsList() const { return findings_; }

 private:
  void fill();

  CriticalPathModelPtr model_;
  TimelineView* timeline_ = nullptr;
  QLabel* title_;
  QCheckBox* highlight_;
  QTableWidget* breakdown_;
  QListWidget* findings_;
};

}  // namespace tunescope::gui
