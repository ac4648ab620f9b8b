// The Run tab: a form for `tunescope tune`, Start and Cancel, and the tune as it goes
// (progress with ETA, best so far, the finished trials, the CLI's log). The CLI runs as
// a child process (TuneProcess); when it has finished, the results DB and the best
// config's trace are handed on (resultsReady) to the Candidates and Timeline tabs.
// The knob rows of the form come from the CLI's own catalog (`tunescope knobs --json`).
#pragma once

#include <QElapsedTimer>
#include <QWidget>
#include <functional>

#include "models/TuneProcess.h"
#include "models/TuneRequest.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;
class QTimer;
class QToolButton;

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
  // The CLI that runs the tunes and whose knob catalog makes the knob rows (read anew).
  void setCliProgram(const QString& path);
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
  // One row per knob of the catalog, in its order; empty when it could not be read.
  const QVector<KnobRow>& knobRows() const { return knobRows_; }
  QLineEdit* knobEdit(const QString& key) const;
  // Why there are no knob rows (hidden when there are).
  QLabel* knobMessage() const { return knobMessage_; }
  // The Model field (a built-in name or an .onnx file's path) and its "…" button, which
  // asks the model file picker (Qt's file dialog, filtered to *.onnx) for a file.
  QComboBox* modelField() const { return model_; }
  QToolButton* modelBrowseButton() const { return modelBrowse_; }
  // (parent, start folder, name filter) -> the chosen path, empty when cancelled.
  using FilePicker =
      std::function<QString(QWidget* parent, const QString& start, const QString& filter)>;
  void setModelFilePicker(FilePicker picker) { modelPicker_ = std::move(picker); }

 signals:
  // A tune ended; its results DB (empty when none) and best trace (empty when none).
  void resultsReady(const QString& dbPath, const QString& bestTracePath);
  void runFinished(const tunescope::gui::TuneOutcome& outcome);

 private:
  QWidget* createForm();
  QWidget* createProgressPane();
  void loadKnobRows();
  void showCliProgram();
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
  QToolButton* modelBrowse_;
  FilePicker modelPicker_;
  QComboBox* data_;
  QSpinBox* batch_;
  QComboBox* strategy_;
  QDoubleSpinBox* budget_;
  QLineEdit* algorithms_;
  QGroupBox* knobBox_;
  QFormLayout* knobForm_;
  QLabel* knobMessage_;
  QVector<KnobRow> knobRows_;
  QVector<QLineEdit*> knobEdits_;  // one per row of knobRows_
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
