// Compare tab wiring: common bounds, mirrored windows, the diff table.
#include "widgets/CompareView.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "models/TimeFormat.h"
#include "models/TraceCompare.h"
#include "widgets/TimelineView.h"

namespace tunescope::gui {

namespace {
QLabel* heading() {
  auto* label = new QLabel;
  label->setTextFormat(Qt::RichText);
  label->setContentsMargins(6, 2, 6, 2);
  return label;
}
}  // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent),
      viewA_(new TimelineView),
      viewB_(new TimelineView),
      labelA_(heading()),
      labelB_(heading()),
      summary_(heading()),
      diff_(new KernelDiffModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      table_(new QTableView),
      split_(new QSplitter(Qt::Vertical)) {
  proxy_->setSourceModel(diff_);
  proxy_->setSortRole(KernelDiffModel::SortRole);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(
      -1, Qt::AscendingOrder);  // keep kernelDiff's |delta| order until a header is clicked
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(22);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(KernelDiffModel::NameColumn,
                                                   QHeaderView::Stretch);

  auto pane = [](QLabel* label, QWidget* view) {
    auto* w = new QWidget;
    auto* l = new QVBoxLayout(w);
    l->setContentsMargins(0, 0, 0, 0);
    l->setSpacing(0);
    l->addWidget(label);
    l->addWidget(view, 1);
    return w;
  };
  auto* split = split_;
  split->addWidget(pane(labelA_, viewA_));
  split->addWidget(pane(labelB_, viewB_));
  split->addWidget(pane(summary_, table_));
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 3);
  split->setStretchFactor(2, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);
  labelA_->setText(tr("<i>File → Compare… opens a second trace beside the current one</i>"));

  connect(viewA_, &TimelineView::visibleWindowChanged, this,
          [this](double s, double e) { mirror(viewA_, viewB_, +1, s, e); });
  connect(viewB_, &TimelineView::visibleWindowChanged, this,
          [this](double s, double e) { mirror(viewB_, viewA_, -1, s, e); });
}

void CompareView::mirror(TimelineView*, TimelineView* to, double sign, double startNs,
                         double endNs) {
  if (syncing_ || !a_ || !b_) return;
  // Both views have bounds of the same length offset_ apart, so mirroring a window
  // never gets clamped differently and cannot ping-pong.
  syncing_ = true;
  to->showWindow(startNs + sign * double(offset_), endNs + sign * double(offset_));
  syncing_ = false;
}

void CompareView::setDocuments(TraceDocumentPtr a, TraceDocumentPtr b) {
  a_ = std::move(a);
  b_ = std::move(b);
  offset_ = alignmentOffset(a_->trace(), b_->trace());
  syncing_ = true;
  viewA_->setDocument(a_);
  viewB_->setDocument(b_);
  // The union of both extents in A's clock; B's bounds are the same span shifted.
  const profiler::Interval ea = a_->extent(), eb = b_->extent();
  const qint64 lo = std::min<qint64>(ea.start_ns, eb.start_ns - offset_);
  const qint64 hi = std::max<qint64>(ea.end_ns, eb.end_ns - offset_);
  viewA_->setTimeBounds(lo, hi);
  viewB_->setTimeBounds(lo + offset_, hi + offset_);
  syncing_ = false;
  // The timelines' size hints would leave the diff table a sliver: split by thirds.
  const int third = std::max(split_->height(), 600) / 3;
  split_->setSizes({third, third, third});

  const QString nameA = QFileInfo(a_->filePath()).completeBaseName();
  QString nameB = QFileInfo(b_->filePath()).completeBaseName();
  if (nameB == nameA) nameB += QStringLiteral(" (2)");
  diff_->setNames(nameA, nameB);
  diff_->setRows(kernelDiff(a_->kernelTable(), b_->kernelTable()));
  auto describe = [](const QString& tag, const TraceDocument& d) {
    const std::string& candidate =
        d.trace().metadata.extra.count("candidate") ? d.trace().metadata.extra.at("candidate") : "";
    return QStringLiteral("<b>%1</b> %2 <span style='color:#777'>%3 · span %4</span>")
        .arg(tag, QFileInfo(d.filePath()).fileName().toHtmlEscaped(),
             QString::fromStdString(candidate).toHtmlEscaped(),
             formatDuration(double(d.extent().duration_ns())));
  };
  labelA_->setText(describe(QStringLiteral("A"), *a_));
  labelB_->setText(describe(QStringLiteral("B"), *b_));
  int64_t totalA = 0, totalB = 0;
  for (const KernelDiffRow& r : diff_->rows()) {
    totalA += r.totalA;
    totalB += r.totalB;
  }
  summary_->setText(
      tr("<b>Per-kernel time</b> <span style='color:#777'>total A %1 → B %2 (%3) · first "
         "iterations aligned (B's clock shifted by %4)</span>")
          .arg(formatDuration(double(totalA)), formatDuration(double(totalB)),
               totalA > 0 ? QStringLiteral("%1×").arg(double(totalB) / double(totalA), 0, 'f', 2)
                          : QStringLiteral("–"),
               (offset_ < 0 ? QStringLiteral("−") : QString()) +
                   formatDuration(double(offset_ < 0 ? -offset_ : offset_))));
}

}  // namespace tunescope::gui
