// Candidates tab wiring: chart and table share a current row; clicks open traces.
#include "widgets/CandidatesView.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "models/CandidatesModel.h"
#include "widgets/CandidatesChart.h"

namespace tunescope::gui {

CandidatesView::CandidatesView(QWidget* parent)
    : QWidget(parent),
      model_(new CandidatesModel(this)),
      chart_(new CandidatesChart),
      table_(new QTableView),
      title_(new QLabel),
      hint_(new QLabel),
      problems_(new QComboBox),
      compare_(new QPushButton(tr("Compare baseline ↔ best"))) {
  chart_->setModel(model_);
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(22);
  table_->horizontalHeader()->setStretchLastSection(false);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(CandidatesModel::ReasonColumn,
                                                   QHeaderView::Stretch);
  table_->setWordWrap(false);

  auto* traceFolder = new QPushButton(tr("Trace folder…"));
  traceFolder->setToolTip(
      tr("Map the Chrome traces of a tune's --trace-dir (best.json, baseline.json) to its trials"));
  compare_->setEnabled(false);
  problems_->setMinimumContentsLength(24);
  QFont bold = title_->font();
  bold.setBold(true);
  title_->setFont(bold);
  hint_->setStyleSheet(QStringLiteral("color: #777"));

  auto* bar = new QHBoxLayout;
  bar->addWidget(title_);
  bar->addStretch(1);
  bar->addWidget(new QLabel(tr("Problem:")));
  bar->addWidget(problems_);
  bar->addWidget(traceFolder);
  bar->addWidget(compare_);
  auto* split = split_ = new QSplitter(Qt::Vertical);
  split->addWidget(chart_);
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(split, 1);
  layout->addWidget(hint_);

  connect(chart_, &CandidatesChart::rowClicked, this, [this](int row) {
    selectRow(row);
    openRow(row);
  });
  connect(chart_, &CandidatesChart::rowActivated, this, &CandidatesView::pickTraceFor);
  connect(table_, &QTableView::clicked, this, [this](const QModelIndex& index) {
    chart_->setCurrentRow(index.row());
    openRow(index.row());
  });
  connect(table_, &QTableView::doubleClicked, this,
          [this](const QModelIndex& index) { pickTraceFor(index.row()); });
  connect(problems_, &QComboBox::activated, this, [this](int i) {
    model_->setProblem(problems_->itemData(i).toLongLong());
    refreshHeader();
  });
  connect(traceFolder, &QPushButton::clicked, this, &CandidatesView::pickTraceFolder);
  connect(model_, &CandidatesModel::tracesMapped, this, &CandidatesView::refreshHeader);
  connect(compare_, &QPushButton::clicked, this, [this] {
    const CandidateRow* base = model_->baselineRow();
    const CandidateRow* best = model_->bestRow();
    if (base && best && !base->tracePath.isEmpty() && !best->tracePath.isEmpty())
      emit compareRequested(base->tracePath, best->tracePath);
  });
  refreshHeader();
}

bool CandidatesView::openDb(const QString& path, QString* error) {
  if (!model_->load(path, error)) return false;
  problems_->clear();
  for (const ProblemInfo& p : model_->problems()) problems_->addItem(p.label, qlonglong(p.id));
  refreshHeader();
  // The chart as tall as its rows need (up to 60%), the table gets the rest.
  const int total = std::max(split_->height(), 400);
  const int chart = std::min(chart_->preferredHeight(), total * 3 / 5);
  split_->setSizes({chart, total - chart});
  return true;
}

bool CandidatesView::openRow(int row) {
  if (row < 0 || row >= model_->rowCount()) return false;
  const CandidateRow& r = model_->rows()[static_cast<size_t>(row)];
  if (r.tracePath.isEmpty()) {
    hint_->setText(tr("No trace is known for “%1”: double-click it to pick one, or map a tune's "
                      "--trace-dir with Trace folder…")
                       .arg(r.label));
    return false;
  }
  emit traceRequested(r.tracePath);
  return true;
}

void CandidatesView::selectRow(int row) {
  table_->selectRow(row);
  chart_->setCurrentRow(row);
}

void CandidatesView::pickTraceFor(int row) {
  if (row < 0 || row >= model_->rowCount()) return;
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Trace of %1").arg(model_->rows()[static_cast<size_t>(row)].label),
      QFileInfo(model_->dbPath()).absolutePath(),
      tr("Chrome traces (*.json *.json.gz *.gz);;All files (*)"));
  if (path.isEmpty()) return;
  model_->setTracePath(row, path);
  openRow(row);
}

void CandidatesView::pickTraceFolder() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Trace folder of the tune"),
                                                        QFileInfo(model_->dbPath()).absolutePath());
  if (dir.isEmpty()) return;
  const int mapped = model_->mapTraceDirectory(dir);
  hint_->setText(tr("%n trial(s) mapped to traces in %1", nullptr, mapped).arg(dir));
}

void CandidatesView::refreshHeader() {
  if (model_->dbPath().isEmpty()) {
    title_->setText(tr("No results DB open"));
    hint_->setText(
        tr("File → Open accepts a results DB (.sqlite, .db) written by `tunescope tune --db`."));
    return;
  }
  int ok = 0, traces = 0;
  for (const CandidateRow& r : model_->rows()) {
    ok += r.ok();
    traces += !r.tracePath.isEmpty();
  }
  title_->setText(tr("%1 — %2 configs, %3 ok")
                      .arg(QFileInfo(model_->dbPath()).fileName())
                      .arg(model_->rowCount())
                      .arg(ok));
  const CandidateRow* base = model_->baselineRow();
  const CandidateRow* best = model_->bestRow();
  compare_->setEnabled(base && best && base != best && !base->tracePath.isEmpty() &&
                       !best->tracePath.isEmpty());
  hint_->setText(
      traces > 0
          ? tr("%1 trial(s) have a trace: click one to open it in the timeline.").arg(traces)
          : tr("No traces mapped: Trace folder… maps a tune's --trace-dir; double-click a trial "
               "to pick its trace."));
}

}  // namespace tunescope::gui
