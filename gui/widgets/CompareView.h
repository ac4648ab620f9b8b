// The Compare tab: two traces (A above B) on a common time scale, B shifted so that
// both first iterations start at the same place, sharing zoom and pan, above the
// per-kernel time difference table (B − A).
#pragma once

#include <QWidget>

#include "models/TraceDocument.h"

class QLabel;
class QSortFilterProxyModel;
class QSplitter;
class QTableView;

namespace tunescope::gui {

class KernelDiffModel;
class TimelineView;

class CompareView : public QWidget {
  Q_OBJECT
 public:
  explicit CompareView(QWidget* parent = nullptr);

  void setDocuments(TraceDocumentPtr a, TraceDocumentPtr b);
  TimelineView* viewA() const { return viewA_; }
  TimelineView* viewB() const { return viewB_; }
  KernelDiffModel* diffModel() const { return diff_; }
  QTableView* table() const { return table_; }
  // Time of B = time of A + offset (ns).
  qint64 offset() const { return offset_; }

 private:
  void mirror(TimelineView* from, TimelineView* to, double sign, double startNs, double endNs);

  TimelineView* viewA_;
  TimelineView* viewB_;
  QLabel* labelA_;
  QLabel* labelB_;
  QLabel* summary_;
  KernelDiffModel* diff_;
  QSortFilterProxyModel* proxy_;
  QTableView* table_;
  QSplitter* split_;
  TraceDocumentPtr a_, b_;
  qint64 offset_ = 0;
  bool syncing_ = false;
};

}  // namespace tunescope::gui
