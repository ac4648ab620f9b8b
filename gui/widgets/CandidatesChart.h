// The Candidates bar chart, painted with QPainter (no Qt Charts dependency): one
// horizontal bar per ranked trial, median ex/s with a whisker for the step-time spread,
// the baseline as a dashed reference line; failed/invalid trials listed with their reason.
#pragma once

#include <QWidget>

namespace tunescope::gui {

class CandidatesModel;

class CandidatesChart : public QWidget {
  Q_OBJECT
 public:
  explicit CandidatesChart(QWidget* parent = nullptr);

  void setModel(const CandidatesModel* model);
  void setCurrentRow(int row);
  int currentRow() const { return current_; }
  // The model row under widget position y, or -1.
  int rowAt(int y) const;

  // The height that shows every row at full size (the Candidates tab sizes its splitter with it).
  int preferredHeight() const;
  QSize sizeHint() const override { return {900, 320}; }
  QSize minimumSizeHint() const override { return {400, 160}; }

 signals:
  void rowClicked(int row);
  void rowActivated(int row);

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseDoubleClickEvent(QMouseEvent*) override;

 private:
  struct Layout {
    int top = 0, rowHeight = 0, labelWidth = 0, plotLeft = 0, plotRight = 0, axisY = 0;
    double maxEps = 1;
  };
  Layout layout() const;

  const CandidatesModel* model_ = nullptr;
  int current_ = -1;
};

}  // namespace tunescope::gui
