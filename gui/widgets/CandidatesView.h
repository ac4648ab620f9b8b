// The Candidates tab: a results DB's ranked trials as a bar chart above a table, a
// problem picker, and the traces of trials (mapped from the tune's --trace-dir, or
// picked by the user) opened in the timeline or compared.
#pragma once

#include <QWidget>

class QComboBox;
class QLabel;
class QPushButton;
class QSplitter;
class QTableView;

namespace tunescope::gui {

class CandidatesChart;
class CandidatesModel;

class CandidatesView : public QWidget {
  Q_OBJECT
 public:
  explicit CandidatesView(QWidget* parent = nullptr);

  CandidatesModel* model() const { return model_; }
  CandidatesChart* chart() const { return chart_; }
  QTableView* table() const { return table_; }
  // Loads the DB; false (and *error naming the file) when it is not one of ours.
  bool openDb(const QString& path, QString* error);
  // Opens the trial's trace when one is mapped (emits traceRequested); false otherwise.
  bool openRow(int row);

 signals:
  void traceRequested(const QString& path);
  void compareRequested(const QString& pathA, const QString& pathB);

 private:
  void selectRow(int row);
  void pickTraceFor(int row);
  void pickTraceFolder();
  void refreshHeader();

  CandidatesModel* model_;
  CandidatesChart* chart_;
  QTableView* table_;
  QLabel* title_;
  QLabel* hint_;
  QComboBox* problems_;
  QPushButton* compare_;
  QSplitter* split_;
};

}  // namespace tunescope::gui
