// Alignment and per-kernel differences of two traces.
#include "models/TraceCompare.h"

#include <QBrush>
#include <QColor>
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>

#include "models/TimeFormat.h"

namespace tunescope::gui {

int64_t firstIterationStart(const profiler::Trace& trace) {
  int64_t first = std::numeric_limits<int64_t>::max();
  for (const profiler::Range& r : trace.ranges)
    if (r.category == profiler::RangeCategory::iteration) first = std::min(first, r.start_ns);
  if (first != std::numeric_limits<int64_t>::max()) return first;
  for (const profiler::Activity& a : trace.activities) first = std::min(first, a.start_ns);
  for (const profiler::Range& r : trace.ranges) first = std::min(first, r.start_ns);
  return first == std::numeric_limits<int64_t>::max() ? 0 : first;
}

int64_t alignmentOffset(const profiler::Trace& a, const profiler::Trace& b) {
  return firstIterationStart(b) - firstIterationStart(a);
}

std::vector<KernelDiffRow> kernelDiff(const std::vector<profiler::KernelStats>& a,
                                      const std::vector<profiler::KernelStats>& b) {
  // kernel_table rows are per (kind, name): a memcpy and a kernel may share a name.
  std::map<std::pair<int, std::string>, KernelDiffRow> rows;
  auto row = [&](const profiler::KernelStats& k) -> KernelDiffRow& {
    KernelDiffRow& r = rows[{static_cast<int>(k.kind), k.name}];
    r.name = k.name;
    r.kind = k.kind;
    return r;
  };
  for (const auto& k : a) {
    KernelDiffRow& r = row(k);
    r.callsA += k.calls;
    r.totalA += k.total_ns;
  }
  for (const auto& k : b) {
    KernelDiffRow& r = row(k);
    r.callsB += k.calls;
    r.totalB += k.total_ns;
  }
  std::vector<KernelDiffRow> out;
  for (auto& [key, r] : rows) out.push_back(std::move(r));
  std::stable_sort(out.begin(), out.end(), [](const KernelDiffRow& x, const KernelDiffRow& y) {
    return std::llabs(x.delta()) > std::llabs(y.delta());
  });
  return out;
}

void KernelDiffModel::setRows(std::vector<KernelDiffRow> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

void KernelDiffModel::setNames(const QString& a, const QString& b) {
  nameA_ = a;
  nameB_ = b;
  emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
}

int KernelDiffModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int KernelDiffModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelDiffModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const KernelDiffRow& r = rows_[static_cast<size_t>(index.row())];
  if (role == SortRole) {
    switch (index.column()) {
      case NameColumn: return QString::fromStdString(r.name);
      case CallsAColumn: return qulonglong(r.callsA);
      case CallsBColumn: return qulonglong(r.callsB);
      case TotalAColumn: return qlonglong(r.totalA);
      case TotalBColumn: return qlonglong(r.totalB);
      case DeltaColumn: return qlonglong(r.delta());
      case RatioColumn: return r.totalA > 0 ? r.ratio() : std::numeric_limits<double>::infinity();
      default: return {};
    }
  }
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case NameColumn: return QString::fromStdString(r.name);
      case CallsAColumn: return qulonglong(r.callsA);
      case CallsBColumn: return qulonglong(r.callsB);
      case TotalAColumn: return formatDuration(double(r.totalA));
      case TotalBColumn: return formatDuration(double(r.totalB));
      case DeltaColumn:
        return (r.delta() > 0   ? QStringLiteral("+")
                : r.delta() < 0 ? QStringLiteral("−")
                                : QString()) +
               formatDuration(double(std::llabs(r.delta())));
      case RatioColumn:
        if (r.totalA == 0) return tr("new");
        if (r.totalB == 0) return tr("gone");
        return QStringLiteral("%1×").arg(r.ratio(), 0, 'f', 2);
      default: return {};
    }
  }
  if (role == Qt::TextAlignmentRole && index.column() != NameColumn)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  // B slower than A in red, faster in green: the colour says which way a kernel moved.
  if (role == Qt::ForegroundRole &&
      (index.column() == DeltaColumn || index.column() == RatioColumn) && r.delta() != 0)
    return QBrush(r.delta() > 0 ? QColor(0xc0, 0x39, 0x2b) : QColor(0x1e, 0x84, 0x49));
  return {};
}

QVariant KernelDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case NameColumn: return tr("Kernel");
    case CallsAColumn: return tr("Calls %1").arg(nameA_);
    case CallsBColumn: return tr("Calls %1").arg(nameB_);
    case TotalAColumn: return tr("Total %1").arg(nameA_);
    case TotalBColumn: return tr("Total %1").arg(nameB_);
    case DeltaColumn: return tr("Δ (%1 − %2)").arg(nameB_, nameA_);
    case RatioColumn: return tr("%1 / %2").arg(nameB_, nameA_);
    default: return {};
  }
}

}  // namespace tunescope::gui
