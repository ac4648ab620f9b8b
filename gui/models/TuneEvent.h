// One line of `tunescope tune --progress jsonl` (schema tunescope.tune-progress/1,
// documented in cli/TuneJsonProgress.h), parsed. The Run tab sees the tune only
// through these.
#pragma once

#include <QMap>
#include <QString>
#include <optional>

namespace tunescope::gui {

struct TuneEvent {
  enum class Kind { Start, TrialStart, Trial, Round, Done };
  Kind kind = Kind::Start;
  // start
  QString model, data, strategy, dbPath;
  int batch = 0;
  // start, trial_start, trial
  int index = 0;  // 1-based
  int total = 0;
  QString candidate;
  // trial
  QString status;  // ok | invalid | failed
  QString reason;
  bool reused = false;
  double medianEps = 0;
  double spread = 0;
  double seconds = 0;     // this trial's wall time
  double elapsed = 0;     // since the tune started
  double eta = 0;         // seconds left
  QString bestCandidate;  // trial: best so far; done: the winner (empty: none)
  double bestEps = 0;
  // round: interleaved rounds under way (index: the trials recorded before them)
  int round = 0;
  int members = 0;
  int racing = 0;
  int toDecide = 0;  // 0: unknown yet, or decided
  // done
  bool interrupted = false;
  int trials = 0;
  QString decision;
  QString outPath;                // empty: no config written
  QMap<QString, QString> traces;  // "best", "baseline" -> file
  double tuneSeconds = 0;
};

// nullopt and *error naming the problem for a line that is not an event of the schema.
std::optional<TuneEvent> parseTuneEvent(const QByteArray& line, QString* error);

}  // namespace tunescope::gui
