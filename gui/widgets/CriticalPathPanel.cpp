#include "widgets/CriticalPathPanel.h"

#include <QCheckBox>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include "models/TimeFormat.h"
#include "widgets/TimelineView.h"

namespace tunescope::gui {

CriticalPathPanel::CriticalPathPanel(QWidget* parent)
    : QDockWidget(tr("Critical path"), parent),
      title_(new QLabel),
      highlight_(new QCheckBox(tr("Outline the median step's critical path on the timeline"))),
      breakdown_(new QTableWidget(0, 3)),
      findings_(new QListWidget) {
  setObjectName(QStringLiteral("criticalPathDock"));
  title_->setWordWrap(true);
  highlight_->setChecked(true);
  breakdown_->setHorizontalHeaderLabels({tr("Bound"), tr("Time"), tr("Share")});
  breakdown_->verticalHeader()->hide();
  breakdown_->verticalHeader()->setDefaultSectionSize(20);
  breakdown_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  breakdown_->setSelectionMode(QAbstractItemView::NoSelection);
  breakdown_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  breakdown_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  breakdown_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
  breakdown_->setFixedHeight(22 + 6 * 20 + 4);
  findings_->setWordWrap(true);
  findings_->setAlternatingRowColors(true);
  findings_->setToolTip(tr("Click a finding to show its step and evidence on the timeline"));

  auto* body = new QWidget;
  auto* layout = new QVBoxLayout(body);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(title_);
  layout->addWidget(highlight_);
  layout->addWidget(breakdown_);
  layout->addWidget(new QLabel(tr("Findings, by estimated gain on the median step:")));
  layout->addWidget(findings_, 1);
  setWidget(body);
  connect(findings_, &QListWidget::currentRowChanged, this, &CriticalPathPanel::activateFinding);
  fill();
}

void CriticalPathPanel::attach(TimelineView* timeline) {
  timeline_ = timeline;
  connect(highlight_, &QCheckBox::toggled, timeline_, &TimelineView::setCriticalPathShown);
}

void CriticalPathPanel::setDocument(const TraceDocumentPtr& document) {
  model_ = document ? std::make_shared<const CriticalPathModel>(document->trace())
                    : CriticalPathModelPtr();
  if (timeline_) timeline_->setCriticalPath(model_ && model_->analysed() ? model_ : nullptr);
  fill();
}

void CriticalPathPanel::fill() {
  breakdown_->setRowCount(0);
  findings_->clear();
  if (!model_) {
    title_->setText(tr("Open a trace to see its critical path."));
    return;
  }
  if (!model_->analysed()) {
    title_->setText(tr("No critical path: %1.").arg(model_->whyNotAnalysed()));
    return;
  }
  const profiler::Interval step = model_->stepWindow();
  title_->setText(
      tr("Median step %1: %2, %3 activities on its critical path")
          .arg(model_->stepName(), formatDuration(static_cast<double>(step.duration_ns())))
          .arg(model_->pathActivities().size()));
  const auto& rows = model_->breakdown();
  breakdown_->setRowCount(static_cast<int>(rows.size()));
  for (int r = 0; r < static_cast<int>(rows.size()); ++r) {
    const BoundRow& row = rows[static_cast<size_t>(r)];
    auto* time = new QTableWidgetItem(formatDuration(static_cast<double>(row.ns)));
    auto* share = new QTableWidgetItem(QStringLiteral("%1 %").arg(row.percent, 0, 'f', 1));
    time->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    share->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    breakdown_->setItem(r, 0, new QTableWidgetItem(row.bound));
    breakdown_->setItem(r, 1, time);
    breakdown_->setItem(r, 2, share);
  }
  for (size_t i = 0; i < model_->findings().size(); ++i) {
    auto* item = new QListWidgetItem(model_->findingText(i));
    item->setToolTip(tr("Try: %1").arg(QString::fromStdString(model_->findings()[i].suggestion)));
    findings_->addItem(item);
  }
  if (model_->findings().empty()) findings_->addItem(tr("none above 1 % of the step"));
}

void CriticalPathPanel::activateFinding(int index) {
  if (!timeline_ || !model_ || !model_->analysed() || index < 0 ||
      index >= static_cast<int>(model_->findings().size()))
    return;
  const profiler::analysis::Finding& f = model_->findings()[static_cast<size_t>(index)];
  const double margin = 0.03 * static_cast<double>(f.window_end_ns - f.window_start_ns);
  timeline_->showWindow(static_cast<double>(f.window_start_ns) - margin,
                        static_cast<double>(f.window_end_ns) + margin);
  if (findings_->currentRow() != index) findings_->setCurrentRow(index);
  if (f.evidence.empty()) {
    // Waits and gaps: show the first wait on the path with its dependency arrows.
    timeline_->setHighlightedKernel({});
    timeline_->selectActivity(model_->firstLinkedOnPath());
    return;
  }
  timeline_->setHighlightedKernel(QString::fromStdString(f.evidence.front()));
  timeline_->selectActivity(model_->firstOf(f.evidence));
}

}  // namespace tunescope::gui
