// Runs `tunescope tune --progress jsonl` as a child process (QProcess, so the GUI thread
// never waits on it) and turns its stdout lines into TuneEvents and its stderr into log
// text. Cancel is cooperative, as Ctrl-C in a terminal: SIGINT makes the CLI finish the
// trial in flight, keep every finished trial in the results DB and exit 130; a second
// cancel sends SIGINT again, which ends the child at once (committed trials stay).
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <optional>

#include "models/TuneEvent.h"
#include "models/TuneRequest.h"

namespace tunescope::gui {

struct TuneOutcome {
  enum class Result { Completed, Interrupted, Failed };
  Result result = Result::Failed;
  int exitCode = -1;              // -1: did not start, or ended by a signal
  QString message;                // Failed: the CLI's error line, or why it did not start or end
  std::optional<TuneEvent> done;  // the done event, when the CLI sent one
};

class TuneProcess : public QObject {
  Q_OBJECT
 public:
  explicit TuneProcess(QObject* parent = nullptr);
  // Closing the GUI stops a running tune at once (as a second Ctrl-C would): the trials
  // finished so far are already committed to the results DB.
  ~TuneProcess() override;

  // `tunescope` next to this executable, else the one on PATH; empty when neither.
  static QString locateCli();
  const QString& program() const { return program_; }
  void setProgram(const QString& path) { program_ = path; }

  // False (and nothing happens) while a tune runs.
  bool start(const TuneRequest& request);
  void cancel();
  bool isRunning() const { return process_->state() != QProcess::NotRunning; }
  int cancelRequests() const { return cancels_; }
  qint64 processId() const { return process_->processId(); }

 signals:
  void started(const QString& commandLine);
  void tuneEvent(const tunescope::gui::TuneEvent& event);
  void logText(const QString& text);
  void finished(const tunescope::gui::TuneOutcome& outcome);

 private:
  void readEvents();
  void readLog();
  void processEnded(int exitCode, QProcess::ExitStatus status);
  void processError(QProcess::ProcessError error);
  QString errorLine() const;

  QProcess* process_;
  QString program_;
  QString stderrText_;
  std::optional<TuneEvent> done_;
  int cancels_ = 0;
};

}  // namespace tunescope::gui
