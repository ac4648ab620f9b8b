// The Run tab: a form for `tunescope tune`, Start and Cancel, and the tune as it goes
// (progress with ETA, best so far, the finished trials, the CLI's log). The CLI runs as
// a child process (TuneProcess); when it has finished, the results DB and the best
// config's trace are handed on (resultsReady) to the Candidates and Timeline tabs.
#pragma once

#include <QElapsedTimer>
#include <QWidget>

#include "models/TuneProcess.h"
#include "models/TuneRequest.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;
class QTimer;

namespace tunescope::gui {

class TuneTrialsModel;

class RunView : public QWidget {
  Q_OBJECT
 public:
  explicit RunView(QWidget* parent = nullptr);

  // The form's values, and the other way round.
  TuneRequest request() const;
  void setRequest(const TuneRequest& request);
  // Starts the tune of the form; false when one is running.
  bool start();
  // First call: SIGINT (the trial in flight finishes); second: stop at once.
  void cancel();
  // Emit resultsReady by itself when a tune completes (default on).
  void setOpenWhenDone(bool open);

  TuneProcess* process() const { return process_; }
  TuneTrialsModel* trialsModel() const { return trials_; }
  QTableView* trialsTable() const { return table_; }
  QPushButton* startButton() const { return start_; }
  QPushButton* cancelButton() const { return cancel_; }
  QPushButton* openButton() const { return open_; }
  QProgressBar* progressBar() const { return progress_; }
  QLabel* statusLabel() const { return status_; }
  QLabel* bestLabel() const { return best_; }
  QPlainTextEdit* logView() const { return log_; }

 signals:
  // A tune ended; its results DB (empty when none) and best trace (empty when none).
  void resultsReady(const QString& dbPath, const QString& bestTracePath);
  void runFinished(const tunescope::gui::TuneOutcome& outcome);

 private:
  QWidget* createForm();
  QWidget* createProgressPane();
  void applyEvent(const TuneEvent& event);
  void showOutcome(const TuneOutcome& outcome);
  void openResults();
  void setRunning(bool running);
  void tick();
  QLineEdit* pathEdit(const QString& placeholder);
  QWidget* withBrowse(QLineEdit* edit, bool folder, bool save);

  TuneProcess* process_;
  TuneTrialsModel* trials_;
  // Form
  QComboBox* model_;
  QComboBox* data_;
  QSpinBox* batch_;
  QComboBox* strategy_;
  QDoubleSpinBox* budget_;
  QCheckBox* nchw_;
  QCheckBox* nhwc_;
  QLineEdit* algorithms_;
  QLineEdit* threads_;
  QLineEdit* streams_;
  QSpinBox* steps_;
  QSpinBox* warmup_;
  QLineEdit* db_;
  QLineEdit* out_;
  QLineEdit* traceDir_;
  QLineEdit* extra_;
  QLabel* cli_;
  QCheckBox* openWhenDone_;
  QPushButton* start_;
  QPushButton* cancel_;
  QPushButton* open_;
  // Progress
  QLabel* status_;
  QLabel* best_;
  QProgressBar* progress_;
  QTableView* table_;
  QPlainTextEdit* log_;
  QTimer* ticker_;
  QElapsedTimer clock_;
  double etaAtLastTrial_ = -1;  // seconds, -1: none yet
  qint64 lastTrialAtMs_ = 0;
  QString resultsDb_;
  QString bestTrace_;
};

}  // namespace tunescope::gui
