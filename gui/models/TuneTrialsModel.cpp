#include "models/TuneTrialsModel.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <algorithm>

namespace tunescope::gui {

void TuneTrialsModel::clear() {
  beginResetModel();
  rows_.clear();
  best_.clear();
  bestFinalEps_ = 0;
  endResetModel();
}

void TuneTrialsModel::setBest(const QString& candidate, double finalEps) {
  if (candidate == best_ && finalEps == bestFinalEps_) return;
  best_ = candidate;
  bestFinalEps_ = finalEps;
  // The bold row moves.
  if (rowCount() > 0)
    emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1),
                     {Qt::FontRole, Qt::BackgroundRole});
}

double TuneTrialsModel::ratioToBaseline(const TuneEvent& row) const {
  const auto ok = [](const TuneEvent& r) {
    return r.kind == TuneEvent::Kind::Trial && r.status == QLatin1String("ok");
  };
  if (rows_.empty() || rows_.front().index != 1 || !ok(rows_.front()) || !ok(row) ||
      rows_.front().medianEps <= 0)
    return 0;
  return row.medianEps / rows_.front().medianEps;
}

void TuneTrialsModel::apply(const TuneEvent& event) {
  if (event.kind == TuneEvent::Kind::Done) return setBest(event.bestCandidate, event.bestEps);
  if (event.kind != TuneEvent::Kind::TrialStart && event.kind != TuneEvent::Kind::Trial) return;
  // The running row of the same trial, if any: interleaved rounds start all their new
  // members at once, and their results come when the rounds end.
  const auto running = std::find_if(rows_.rbegin(), rows_.rend(), [&](const TuneEvent& r) {
    return isRunning(r) && r.index == event.index;
  });
  if (running != rows_.rend()) {
    *running = event;
    const int row = static_cast<int>(std::distance(rows_.begin(), running.base()) - 1);
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
  } else {
    const int row = static_cast<int>(rows_.size());
    beginInsertRows({}, row, row);
    rows_.push_back(event);
    endInsertRows();
  }
  if (event.kind == TuneEvent::Kind::Trial) setBest(event.bestCandidate);
}

void TuneTrialsModel::abandonRunning(const QString& why) {
  for (size_t r = 0; r < rows_.size(); ++r) {
    if (!isRunning(rows_[r])) continue;
    rows_[r].status = tr("not finished");
    rows_[r].reason = why;
    emit dataChanged(index(static_cast<int>(r), 0), index(static_cast<int>(r), ColumnCount - 1));
  }
}

int TuneTrialsModel::finishedCount() const {
  return static_cast<int>(std::count_if(rows_.begin(), rows_.end(), [](const TuneEvent& r) {
    return r.kind == TuneEvent::Kind::Trial;
  }));
}

int TuneTrialsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int TuneTrialsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant TuneTrialsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const TuneEvent& r = rows_[static_cast<size_t>(index.row())];
  const bool running = isRunning(r);
  const bool ok = !running && r.status == QLatin1String("ok");
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case IndexColumn: return QStringLiteral("%1/%2").arg(r.index).arg(r.total);
      case CandidateColumn: return r.candidate;
      case StatusColumn:
        return running ? tr("running…") : r.reused ? tr("%1 (from DB)").arg(r.status) : r.status;
      case EpsColumn:
        return ok ? QStringLiteral("%L1").arg(r.medianEps, 0, 'f', 1) : QStringLiteral("–");
      case SpreadColumn:
        return ok ? QStringLiteral("%1%").arg(r.spread * 100, 0, 'f', 1) : QStringLiteral("–");
      case RatioColumn: {
        const double ratio = ratioToBaseline(r);
        return ratio > 0 ? QStringLiteral("%1×").arg(ratio, 0, 'f', 2) : QStringLiteral("–");
      }
      case SecondsColumn:
        if (running) return QStringLiteral("…");
        return r.kind == TuneEvent::Kind::Trial ? QStringLiteral("%1 s").arg(r.seconds, 0, 'f', 1)
                                                : QStringLiteral("–");
      case ReasonColumn:
        // The sweep's figure is in the row; the winner's final word may differ.
        if (ok && r.candidate == best_ && bestFinalEps_ > 0 && bestFinalEps_ != r.medianEps)
          return tr("winner: %L1 ex/s when re-measured against the runner-up")
              .arg(bestFinalEps_, 0, 'f', 1);
        return r.reason;
      default: return {};
    }
  }
  if (role == Qt::ToolTipRole && index.column() == ReasonColumn && !r.reason.isEmpty())
    return r.reason;
  if (role == Qt::TextAlignmentRole && index.column() != CandidateColumn &&
      index.column() != ReasonColumn && index.column() != StatusColumn)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::FontRole && ((!running && r.candidate == best_) || running)) {
    QFont font;
    font.setBold(!running);
    font.setItalic(running);
    return font;
  }
  if (role == Qt::ForegroundRole && index.column() == StatusColumn) {
    if (running) return QBrush(QColor(0x80, 0x80, 0x80));
    if (ok) return QBrush(QColor(0x1e, 0x84, 0x49));
    if (r.status == QLatin1String("invalid")) return QBrush(QColor(0xd3, 0x54, 0x00));
    return QBrush(QColor(0xc0, 0x39, 0x2b));
  }
  if (role == Qt::BackgroundRole && !running && r.candidate == best_)
    return QBrush(QColor(0xe8, 0xf6, 0xee));
  return {};
}

QVariant TuneTrialsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case IndexColumn: return tr("#");
    case CandidateColumn: return tr("Candidate");
    case StatusColumn: return tr("Status");
    case EpsColumn: return tr("Median ex/s");
    case SpreadColumn: return tr("Spread");
    case RatioColumn: return tr("vs baseline");
    case SecondsColumn: return tr("Took");
    case ReasonColumn: return tr("Reason");
    default: return {};
  }
}

}  // namespace tunescope::gui
