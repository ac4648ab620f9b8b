// Kernel table model: formatting for display, raw values for sorting.
#include "models/KernelTableModel.h"

#include "models/KernelKind.h"
#include "models/TimeFormat.h"

namespace tunescope::gui {

void KernelTableModel::setRows(std::vector<profiler::KernelStats> rows,
                               const std::vector<profiler::KernelPassRate>& passRates) {
  beginResetModel();
  rows_ = std::move(rows);
  gflops_.assign(rows_.size(), -1);
  for (size_t i = 0; i < rows_.size(); ++i)
    for (const profiler::KernelPassRate& rate : passRates)
      if (rate.name == rows_[i].name && rows_[i].kind == profiler::ActivityKind::kernel)
        gflops_[i] = rate.gflops;
  endResetModel();
}

int KernelTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int KernelTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const profiler::KernelStats& k = rows_[static_cast<size_t>(index.row())];
  const int col = index.column();
  if (role == KernelNameRole) return QString::fromStdString(k.name);
  if (role == SortRole) {
    switch (col) {
      case NameColumn: return QString::fromStdString(k.name);
      case CallsColumn: return static_cast<qulonglong>(k.calls);
      case TotalColumn: return static_cast<qlonglong>(k.total_ns);
      case MeanColumn: return k.mean_ns;
      case ShareColumn: return k.share_pct;
      case GflopsColumn: return gflops_[static_cast<size_t>(index.row())];
    }
  }
  if (role == Qt::DisplayRole) {
    switch (col) {
      case NameColumn: return QString::fromStdString(k.name);
      case CallsColumn: return static_cast<qulonglong>(k.calls);
      case TotalColumn: return formatDuration(static_cast<double>(k.total_ns));
      case MeanColumn: return formatDuration(k.mean_ns);
      case ShareColumn: return QStringLiteral("%1 %").arg(k.share_pct, 0, 'f', 1);
      case GflopsColumn: {
        const double gflops = gflops_[static_cast<size_t>(index.row())];
        return gflops < 0 ? QString() : QString::number(gflops, 'f', 1);
      }
    }
  }
  if (role == Qt::TextAlignmentRole && col != NameColumn)
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && col == GflopsColumn &&
      gflops_[static_cast<size_t>(index.row())] >= 0)
    return tr(
        "Effective GFLOP/s of the convolution passes this kernel ran in: each pass's "
        "direct-convolution "
        "flop count over the time of all its kernels, so the kernels of one pass share its rate");
  if (role == Qt::ToolTipRole)
    return QStringLiteral("%1 (%2, %3)")
        .arg(QString::fromStdString(k.name), QString::fromStdString(profiler::to_string(k.kind)),
             familyLabel(classifyKernel(k.kind, k.name).family));
  return {};
}

QVariant KernelTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case NameColumn: return tr("Kernel");
    case CallsColumn: return tr("Calls");
    case TotalColumn: return tr("Total");
    case MeanColumn: return tr("Mean");
    case ShareColumn: return tr("Share");
    case GflopsColumn: return tr("Eff. GFLOP/s");
  }
  return {};
}

KernelTableProxyModel::KernelTableProxyModel(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(KernelTableModel::SortRole);
  setFilterKeyColumn(KernelTableModel::NameColumn);
  setFilterCaseSensitivity(Qt::CaseInsensitive);
}

}  // namespace tunescope::gui
