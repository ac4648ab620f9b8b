// Kernel table dock wiring.
#include "widgets/KernelDock.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "models/KernelTableModel.h"

namespace tunescope::gui {

KernelDock::KernelDock(QWidget* parent)
    : QDockWidget(tr("Kernels"), parent),
      model_(new KernelTableModel(this)),
      proxy_(new KernelTableProxyModel(this)),
      filter_(new QLineEdit),
      table_(new QTableView),
      previous_(new QToolButton),
      next_(new QToolButton),
      position_(new QLabel) {
  setObjectName(QStringLiteral("kernelDock"));
  proxy_->setSourceModel(model_);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(KernelTableModel::TotalColumn, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(22);
  table_->horizontalHeader()->setSectionResizeMode(KernelTableModel::NameColumn,
                                                   QHeaderView::Stretch);
  for (int c = KernelTableModel::CallsColumn; c < KernelTableModel::ColumnCount; ++c)
    table_->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);

  filter_->setPlaceholderText(tr("Filter kernels by name…"));
  filter_->setClearButtonEnabled(true);
  connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);

  previous_->setText(tr("◀ Prev"));
  previous_->setToolTip(tr("Previous instance of the selected kernel (P)"));
  next_->setText(tr("Next ▶"));
  next_->setToolTip(tr("Next instance of the selected kernel (N)"));
  connect(previous_, &QToolButton::clicked, this, &KernelDock::previousInstanceRequested);
  connect(next_, &QToolButton::clicked, this, &KernelDock::nextInstanceRequested);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &KernelDock::emitCurrentKernel);
  showInstancePosition(0, 0);

  auto* bar = new QHBoxLayout;
  bar->addWidget(filter_, 1);
  bar->addWidget(previous_);
  bar->addWidget(position_);
  bar->addWidget(next_);
  auto* layout = new QVBoxLayout;
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(bar);
  layout->addWidget(table_);
  auto* content = new QWidget;
  content->setLayout(layout);
  setWidget(content);
}

void KernelDock::emitCurrentKernel() {
  const QModelIndexList rows = table_->selectionModel()->selectedRows();
  emit kernelSelected(
      rows.isEmpty() ? QString() : rows.first().data(KernelTableModel::KernelNameRole).toString());
}

void KernelDock::showInstancePosition(int position, int count) {
  previous_->setEnabled(count > 0);
  next_->setEnabled(count > 0);
  position_->setText(count == 0 ? QStringLiteral("–")
                                : QStringLiteral("%1 / %2").arg(position).arg(count));
}

}  // namespace tunescope::gui
