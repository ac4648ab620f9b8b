// The per-kernel table (name, calls, total, mean, share %) of profiler::kernel_table,
// with each conv kernel's effective GFLOP/s (profiler::kernel_pass_rates), as a Qt item model;
// KernelTableProxyModel sorts it numerically and filters by name.
#pragma once

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <vector>

#include "profiler/Metrics.h"
#include "profiler/Roofline.h"

namespace tunescope::gui {

class KernelTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    NameColumn,
    CallsColumn,
    TotalColumn,
    MeanColumn,
    ShareColumn,
    GflopsColumn,
    ColumnCount
  };
  // Raw numbers for sorting and tests; DisplayRole holds the formatted text.
  static constexpr int SortRole = Qt::UserRole + 1;
  static constexpr int KernelNameRole = Qt::UserRole + 2;

  using QAbstractTableModel::QAbstractTableModel;

  // `passRates`: the GFLOP/s column's figures by kernel name (blank for other kernels).
  void setRows(std::vector<profiler::KernelStats> rows,
               const std::vector<profiler::KernelPassRate>& passRates = {});
  const std::vector<profiler::KernelStats>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::vector<profiler::KernelStats> rows_;
  std::vector<double> gflops_;  // per row; < 0 where the kernel is no conv pass's
};

class KernelTableProxyModel : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit KernelTableProxyModel(QObject* parent = nullptr);
};

}  // namespace tunescope::gui
