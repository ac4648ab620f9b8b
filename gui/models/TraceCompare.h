// The Compare view's numbers: how two traces line up in time (aligned at the start of
// their first iteration range) and the per-kernel time difference of their kernel
// tables. Plain functions plus a Qt table model, testable without windows.
#pragma once

#include <QAbstractTableModel>
#include <cstdint>
#include <string>
#include <vector>

#include "profiler/Metrics.h"
#include "profiler/Trace.h"

namespace tunescope::gui {

// Start of the earliest iteration range; without iteration ranges, the first start of
// anything in the trace (so a trace without ranges still aligns at its beginning).
int64_t firstIterationStart(const profiler::Trace& trace);
// What to add to a time of trace A to get the matching time of trace B.
int64_t alignmentOffset(const profiler::Trace& a, const profiler::Trace& b);

struct KernelDiffRow {
  std::string name;
  profiler::ActivityKind kind = profiler::ActivityKind::kernel;
  size_t callsA = 0, callsB = 0;
  int64_t totalA = 0, totalB = 0;  // ns
  int64_t delta() const { return totalB - totalA; }
  // totalB / totalA; 0 when the kernel is missing from A (shown as "new"; one missing
  // from B shows as "gone").
  double ratio() const { return totalA > 0 ? double(totalB) / double(totalA) : 0.0; }
};

// One row per (kind, name) present in either table, largest |delta| first (then by name).
std::vector<KernelDiffRow> kernelDiff(const std::vector<profiler::KernelStats>& a,
                                      const std::vector<profiler::KernelStats>& b);

class KernelDiffModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    NameColumn,
    CallsAColumn,
    CallsBColumn,
    TotalAColumn,
    TotalBColumn,
    DeltaColumn,
    RatioColumn,
    ColumnCount
  };
  static constexpr int SortRole = Qt::UserRole + 1;

  using QAbstractTableModel::QAbstractTableModel;

  void setRows(std::vector<KernelDiffRow> rows);
  const std::vector<KernelDiffRow>& rows() const { return rows_; }
  // Column titles name the two traces ("calls baseline", "total best"...).
  void setNames(const QString& a, const QString& b);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::vector<KernelDiffRow> rows_;
  QString nameA_ = QStringLiteral("A"), nameB_ = QStringLiteral("B");
};

}  // namespace tunescope::gui
