// The kernel table dock: filter box, sortable table (KernelTableModel through
// KernelTableProxyModel) and previous/next buttons to step through the selected
// kernel's instances on the timeline.
#pragma once

#include <QDockWidget>

class QLabel;
class QLineEdit;
class QTableView;
class QToolButton;

namespace tunescope::gui {

class KernelTableModel;
class KernelTableProxyModel;

class KernelDock : public QDockWidget {
  Q_OBJECT
 public:
  explicit KernelDock(QWidget* parent = nullptr);

  KernelTableModel* model() const { return model_; }
  KernelTableProxyModel* proxy() const { return proxy_; }
  QTableView* table() const { return table_; }
  // Shows "position / count" next to the step buttons.
  void showInstancePosition(int position, int count);

 signals:
  void kernelSelected(const QString& name);  // empty when the selection is cleared
  void nextInstanceRequested();
  void previousInstanceRequested();

 private:
  void emitCurrentKernel();

  KernelTableModel* model_;
  KernelTableProxyModel* proxy_;
  QLineEdit* filter_;
  QTableView* table_;
  QToolButton* previous_;
  QToolButton* next_;
  QLabel* position_;
};

}  // namespace tunescope::gui
