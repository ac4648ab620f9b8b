// The Run tab's table: the trials of the running tune as they finish (status in
// colour, the best so far in bold), plus a "running" row for each candidate being
// measured (one in a sweep; every new member of interleaved rounds). Fed by TuneEvents.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "models/TuneEvent.h"

namespace tunescope::gui {

class TuneTrialsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    IndexColumn,
    CandidateColumn,
    StatusColumn,
    EpsColumn,
    SpreadColumn,
    RatioColumn,
    SecondsColumn,
    ReasonColumn,
    ColumnCount
  };

  using QAbstractTableModel::QAbstractTableModel;

  void clear();
  // trial_start adds a running row; trial replaces the running row of its index (or adds
  // the row of a reused trial); done marks the declared winner (a tie may crown a
  // slower, simpler config).
  void apply(const TuneEvent& event);
  // The tune ended without finishing the running candidates (stopped at once, or failed).
  void abandonRunning(const QString& why);

  // Trials the CLI finished (running and abandoned rows not counted).
  int finishedCount() const;
  const std::vector<TuneEvent>& rows() const { return rows_; }
  QString bestCandidate() const { return best_; }
  // median ex/s over the baseline's (the tune's first candidate, nchw + the backend's default
  // conv); 0 when either is not ok.
  double ratioToBaseline(const TuneEvent& row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  void setBest(const QString& candidate, double finalEps = 0);
  // A trial_start row is running until abandonRunning() gives it a status.
  static bool isRunning(const TuneEvent& row) {
    return row.kind == TuneEvent::Kind::TrialStart && row.status.isEmpty();
  }

  std::vector<TuneEvent> rows_;  // Trial events; TrialStart for those running (or abandoned)
  QString best_;
  double bestFinalEps_ = 0;  // the winner's figure after the interleaved re-measurement (done)
};

}  // namespace tunescope::gui
