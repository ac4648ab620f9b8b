// Run tab wiring: the form builds a TuneRequest, TuneProcess runs it, and its events
// drive the progress bar, the best-so-far line, the trials table and the log.
#include "widgets/RunView.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTextCursor>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>

#include "models/TuneTrialsModel.h"

namespace tunescope::gui {

namespace {

QStringList commaList(const QString& text) {
  QStringList out;
  for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
    if (!part.trimmed().isEmpty()) out << part.trimmed();
  return out;
}

// "12 s", "3 min 04 s"
QString seconds(double s) {
  if (!std::isfinite(s) || s < 0) return QStringLiteral("?");
  if (s < 60) return QStringLiteral("%1 s").arg(s, 0, 'f', s < 10 ? 1 : 0);
  const auto whole = static_cast<qint64>(s);
  return QStringLiteral("%1 min %2 s").arg(whole / 60).arg(whole % 60, 2, 10, QLatin1Char('0'));
}

QString defaultRunFolder() { return QDir::home().filePath(QStringLiteral("tunescope-runs")); }

const QString kErrorStyle = QStringLiteral("color: #c0392b; font-weight: bold");
const QString kDoneStyle = QStringLiteral("color: #1e8449; font-weight: bold");

}  // namespace

RunView::RunView(QWidget* parent)
    : QWidget(parent),
      process_(new TuneProcess(this)),
      trials_(new TuneTrialsModel(this)),
      ticker_(new QTimer(this)) {
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(createForm());
  split->addWidget(createProgressPane());
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  split->setChildrenCollapsible(false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(split);

  ticker_->setInterval(1000);
  connect(ticker_, &QTimer::timeout, this, &RunView::tick);
  connect(process_, &TuneProcess::started, this, [this](const QString& commandLine) {
    log_->appendPlainText(QStringLiteral("$ %1").arg(commandLine));
  });
  connect(process_, &TuneProcess::tuneEvent, this, &RunView::applyEvent);
  connect(process_, &TuneProcess::logText, this, [this](const QString& text) {
    // insertPlainText keeps the CLI's own line breaks (appendPlainText would add more).
    log_->moveCursor(QTextCursor::End);
    log_->insertPlainText(text);
    log_->verticalScrollBar()->setValue(log_->verticalScrollBar()->maximum());
  });
  connect(process_, &TuneProcess::finished, this, &RunView::showOutcome);
  loadKnobRows();
  setRequest(TuneRequest::inFolder(defaultRunFolder()));
  setRunning(false);
}

QLineEdit* RunView::pathEdit(const QString& placeholder) {
  auto* edit = new QLineEdit;
  edit->setPlaceholderText(placeholder);
  edit->setMinimumWidth(260);
  return edit;
}

QWidget* RunView::withBrowse(QLineEdit* edit, bool folder, bool save) {
  auto* box = new QWidget;
  auto* row = new QHBoxLayout(box);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(edit, 1);
  auto* browse = new QToolButton;
  browse->setText(QStringLiteral("…"));
  browse->setToolTip(folder ? tr("Choose a folder") : tr("Choose a file"));
  row->addWidget(browse);
  connect(browse, &QToolButton::clicked, this, [this, edit, folder, save] {
    const QString start = edit->text().isEmpty() ? defaultRunFolder() : edit->text();
    const QString path = folder
                             ? QFileDialog::getExistingDirectory(this, tr("Choose a folder"), start)
                         : save ? QFileDialog::getSaveFileName(this, tr("Choose a file"), start)
                                : QFileDialog::getOpenFileName(this, tr("Choose a file"), start);
    if (!path.isEmpty()) edit->setText(path);
  });
  return box;
}

QWidget* RunView::createForm() {
  model_ = new QComboBox;
  model_->setEditable(true);
  model_->addItems({QStringLiteral("lenet5"), QStringLiteral("resnet18-small")});
  model_->setToolTip(tr("A built-in model, or the path of an ONNX model file (.onnx)"));
  modelPicker_ = [](QWidget* parent, const QString& start, const QString& filter) {
    return QFileDialog::getOpenFileName(parent, tr("Choose an ONNX model"), start, filter);
  };
  auto* modelBox = new QWidget;
  {
    auto* row = new QHBoxLayout(modelBox);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(model_, 1);
    modelBrowse_ = new QToolButton;
    modelBrowse_->setText(QStringLiteral("…"));
    modelBrowse_->setToolTip(tr("Choose an ONNX model file"));
    row->addWidget(modelBrowse_);
    connect(modelBrowse_, &QToolButton::clicked, this, [this] {
      const QFileInfo current(model_->currentText());
      const QString start =
          current.suffix() == QStringLiteral("onnx") ? current.absolutePath() : defaultRunFolder();
      const QString path = modelPicker_(this, start, tr("ONNX models (*.onnx);;All files (*)"));
      if (!path.isEmpty()) model_->setCurrentText(path);
    });
  }
  data_ = new QComboBox;
  data_->setEditable(true);
  data_->addItems({QStringLiteral("fake"), QStringLiteral("fashion-mnist")});
  data_->setToolTip(tr(
      "fake (synthetic, no input pipeline), fashion-mnist, or a folder of MNIST-format IDX files"));
  auto* dataBox = new QWidget;
  {
    auto* row = new QHBoxLayout(dataBox);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(data_, 1);
    auto* browse = new QToolButton;
    browse->setText(QStringLiteral("…"));
    browse->setToolTip(tr("Choose a folder of IDX files"));
    row->addWidget(browse);
    connect(browse, &QToolButton::clicked, this, [this] {
      const QString dir =
          QFileDialog::getExistingDirectory(this, tr("Folder of MNIST-format IDX files"));
      if (!dir.isEmpty()) data_->setCurrentText(dir);
    });
  }
  // 0 is allowed on purpose: the CLI judges values and its message names the option.
  batch_ = new QSpinBox;
  batch_->setRange(0, 1 << 20);
  strategy_ = new QComboBox;
  strategy_->addItems({QStringLiteral("auto"), QStringLiteral("exhaustive"),
                       QStringLiteral("per-layer"), QStringLiteral("halving")});
  strategy_->setToolTip(
      tr("auto: the strategy estimated cheapest for this model and space (the CLI's default; "
         "the log says which and why); exhaustive: every candidate; per-layer: time each conv "
         "layer's algorithms alone, then the per-layer pick and its global variants; halving: "
         "time every candidate briefly, race the fastest third on with 3x the steps"));
  budget_ = new QDoubleSpinBox;
  budget_->setRange(0, 7 * 24 * 3600);
  budget_->setDecimals(0);
  budget_->setSuffix(tr(" s"));
  budget_->setSpecialValueText(tr("none"));
  budget_->setToolTip(tr("Seconds after which no new candidate starts"));
  algorithms_ = new QLineEdit;
  algorithms_->setPlaceholderText(tr("all registered"));
  algorithms_->setToolTip(
      tr("Conv algorithms to try, comma-separated (`tunescope list-algorithms` lists them)"));
  // Filled by loadKnobRows() from the CLI's catalog.
  knobBox_ = new QGroupBox(tr("Knobs: values to try, comma-separated"));
  knobBox_->setToolTip(tr("From `tunescope knobs --json`; an empty row tries the grey default"));
  auto* knobColumn = new QVBoxLayout(knobBox_);
  knobMessage_ = new QLabel;
  knobMessage_->setWordWrap(true);
  knobMessage_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  knobMessage_->setStyleSheet(kErrorStyle);
  knobMessage_->hide();
  knobColumn->addWidget(knobMessage_);
  knobForm_ = new QFormLayout;
  knobForm_->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
  knobColumn->addLayout(knobForm_);
  steps_ = new QSpinBox;
  steps_->setRange(1, 100000);
  steps_->setToolTip(tr("Timed steps per candidate"));
  warmup_ = new QSpinBox;
  warmup_->setRange(0, 100000);
  warmup_->setToolTip(tr("Untimed steps per candidate after the numerics check"));
  db_ = pathEdit(tr("no results DB"));
  out_ = pathEdit(tr("required"));
  traceDir_ = pathEdit(tr("no traces"));
  extra_ = new QLineEdit;
  extra_->setPlaceholderText(tr("e.g. --fake-count 512 --test-limit 64"));
  extra_->setToolTip(tr("More `tunescope tune` options (see tunescope tune --help)"));

  auto* tune = new QGroupBox(tr("Tune"));
  auto* form = new QFormLayout(tune);
  form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
  form->addRow(tr("Model"), modelBox);
  form->addRow(tr("Data"), dataBox);
  form->addRow(tr("Batch"), batch_);
  form->addRow(tr("Strategy"), strategy_);
  form->addRow(tr("Budget"), budget_);
  form->addRow(tr("Algorithms"), algorithms_);
  form->addRow(tr("Timed steps"), steps_);
  form->addRow(tr("Warm-up steps"), warmup_);
  form->addRow(tr("Other options"), extra_);

  auto* files = new QGroupBox(tr("Output"));
  auto* fileForm = new QFormLayout(files);
  fileForm->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
  fileForm->addRow(tr("Results DB"), withBrowse(db_, false, true));
  fileForm->addRow(tr("Tuned config"), withBrowse(out_, false, true));
  fileForm->addRow(tr("Trace folder"), withBrowse(traceDir_, true, false));
  openWhenDone_ = new QCheckBox(tr("Open the results when done"));
  openWhenDone_->setChecked(true);
  openWhenDone_->setToolTip(
      tr("The results DB in the Candidates tab and the best config's trace in the Timeline"));
  fileForm->addRow(openWhenDone_);

  cli_ = new QLabel;
  cli_->setWordWrap(true);
  cli_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  cli_->setStyleSheet(QStringLiteral("color: #666"));
  showCliProgram();

  start_ = new QPushButton(tr("Start"));
  start_->setDefault(true);
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setToolTip(
      tr("Interrupt as Ctrl-C does: the trial in flight finishes and every finished trial stays in "
         "the results DB"));
  open_ = new QPushButton(tr("Open results"));
  open_->setToolTip(
      tr("The results DB in the Candidates tab and the best config's trace in the Timeline"));
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(start_);
  buttons->addWidget(cancel_);
  buttons->addStretch(1);
  buttons->addWidget(open_);
  connect(start_, &QPushButton::clicked, this, &RunView::start);
  connect(cancel_, &QPushButton::clicked, this, &RunView::cancel);
  connect(open_, &QPushButton::clicked, this, &RunView::openResults);

  auto* pane = new QWidget;
  auto* column = new QVBoxLayout(pane);
  column->setContentsMargins(0, 0, 6, 0);
  column->addWidget(tune);
  column->addWidget(knobBox_);
  column->addWidget(files);
  column->addLayout(buttons);
  column->addWidget(cli_);
  column->addStretch(1);
  // The knob rows grow with the catalog: a short window scrolls the form.
  auto* scroll = new QScrollArea;
  scroll->setWidget(pane);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(440);
  scroll->setMaximumWidth(580);
  return scroll;
}

void RunView::showCliProgram() {
  const QString program = process_->program();
  cli_->setText(program.isEmpty() ? tr("tunescope CLI: not found next to tunescope-gui nor on PATH")
                                  : tr("tunescope CLI: %1").arg(program));
}

void RunView::setCliProgram(const QString& path) {
  // The values typed so far stay, for the keys the new catalog also has; rows that come
  // after none start from the request's defaults (threads 1,N).
  TuneRequest kept = request();
  if (knobRows_.isEmpty()) kept.knobLists = TuneRequest().knobLists;
  process_->setProgram(path);
  showCliProgram();
  loadKnobRows();
  setRequest(kept);
}

void RunView::loadKnobRows() {
  while (knobForm_->rowCount() > 0) knobForm_->removeRow(0);
  knobEdits_.clear();
  QString error;
  knobRows_ =
      tunescope::gui::loadKnobRows(process_->program(), &error).value_or(QVector<KnobRow>{});
  if (knobRows_.isEmpty()) {
    knobMessage_->setText(tr("No knob rows: %1. Knob lists can still go under Other options (e.g. "
                             "--threads-list 1,4).")
                              .arg(error.isEmpty() ? tr("the catalog has no knobs") : error));
    knobMessage_->show();
  } else {
    knobMessage_->hide();
  }
  for (const KnobRow& knob : knobRows_) {
    auto* edit = new QLineEdit;
    edit->setObjectName(QStringLiteral("knob:%1").arg(knob.key));
    edit->setPlaceholderText(knob.tuneDefault.join(QLatin1Char(',')));
    QString tip = tr("%1\nValues: %2").arg(knob.help, knob.values);
    if (!knob.readBy.isEmpty())
      tip += tr("\nRead by: %1").arg(knob.readBy.join(QStringLiteral(", ")));
    tip +=
        tr("\nPassed as %1; empty: %2").arg(knob.listFlag, knob.tuneDefault.join(QLatin1Char(',')));
    edit->setToolTip(tip);
    auto* label = new QLabel(knob.key);
    label->setToolTip(tip);
    knobForm_->addRow(label, edit);
    knobEdits_ << edit;
  }
}

QLineEdit* RunView::knobEdit(const QString& key) const {
  for (int i = 0; i < knobRows_.size(); ++i)
    if (knobRows_[i].key == key) return knobEdits_[i];
  return nullptr;
}

QWidget* RunView::createProgressPane() {
  status_ = new QLabel(tr("Fill in the form and press Start."));
  status_->setWordWrap(true);
  best_ = new QLabel;
  best_->setTextFormat(Qt::RichText);
  best_->setWordWrap(true);
  QFont big = best_->font();
  big.setPointSizeF(big.pointSizeF() * 1.15);
  best_->setFont(big);
  progress_ = new QProgressBar;
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setTextVisible(true);
  progress_->setMinimumHeight(24);

  table_ = new QTableView;
  table_->setModel(trials_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(22);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(TuneTrialsModel::ReasonColumn,
                                                   QHeaderView::Stretch);
  table_->setWordWrap(false);
  // Rows that are all running (the rounds' members) left the columns at their titles'
  // widths: size each but the stretched reason to its contents as rows come.
  connect(trials_, &QAbstractItemModel::rowsInserted, table_, [this] {
    for (int c = 0; c < TuneTrialsModel::ColumnCount; ++c)
      if (c != TuneTrialsModel::ReasonColumn) table_->resizeColumnToContents(c);
    table_->scrollToBottom();
  });

  log_ = new QPlainTextEdit;
  log_->setReadOnly(true);
  log_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  log_->setPlaceholderText(tr("The CLI's messages (its stderr) appear here."));

  auto* trialsBox = new QGroupBox(tr("Trials"));
  (new QVBoxLayout(trialsBox))->addWidget(table_);
  auto* logBox = new QGroupBox(tr("Log"));
  (new QVBoxLayout(logBox))->addWidget(log_);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(trialsBox);
  split->addWidget(logBox);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);

  auto* pane = new QWidget;
  auto* column = new QVBoxLayout(pane);
  column->setContentsMargins(6, 0, 0, 0);
  column->addWidget(status_);
  column->addWidget(progress_);
  column->addWidget(best_);
  column->addWidget(split, 1);
  return pane;
}

TuneRequest RunView::request() const {
  TuneRequest r;
  r.model = model_->currentText().trimmed();
  r.data = data_->currentText().trimmed();
  r.batch = batch_->value();
  r.strategy = strategy_->currentText();
  r.budgetSeconds = budget_->value();
  r.algorithms = commaList(algorithms_->text());
  r.knobCatalog = knobRows_;
  r.knobLists.clear();
  for (int i = 0; i < knobRows_.size(); ++i)
    if (const QString text = knobEdits_[i]->text().trimmed(); !text.isEmpty())
      r.knobLists[knobRows_[i].key] = text;
  r.steps = steps_->value();
  r.warmup = warmup_->value();
  r.dbPath = db_->text().trimmed();
  r.outPath = out_->text().trimmed();
  r.traceDir = traceDir_->text().trimmed();
  r.extraArguments = extra_->text().trimmed();
  return r;
}

void RunView::setRequest(const TuneRequest& r) {
  model_->setCurrentText(r.model);
  data_->setCurrentText(r.data);
  batch_->setValue(r.batch);
  strategy_->setCurrentText(r.strategy);
  budget_->setValue(r.budgetSeconds);
  algorithms_->setText(r.algorithms.join(QLatin1Char(',')));
  // A key the catalog lacks has no row, so no way to be shown or edited: it is dropped.
  for (int i = 0; i < knobRows_.size(); ++i)
    knobEdits_[i]->setText(r.knobLists.value(knobRows_[i].key));
  steps_->setValue(r.steps);
  warmup_->setValue(r.warmup);
  db_->setText(r.dbPath);
  out_->setText(r.outPath);
  traceDir_->setText(r.traceDir);
  extra_->setText(r.extraArguments);
}

void RunView::setOpenWhenDone(bool open) { openWhenDone_->setChecked(open); }

bool RunView::start() {
  if (process_->isRunning()) return false;
  const TuneRequest r = request();
  // The CLI creates the trace folder; the DB's and the config's folders must exist.
  for (const QString& file : {r.dbPath, r.outPath})
    if (!file.isEmpty()) QDir().mkpath(QFileInfo(file).absolutePath());
  trials_->clear();
  resultsDb_.clear();
  bestTrace_.clear();
  etaAtLastTrial_ = -1;
  best_->clear();
  log_->clear();
  status_->setStyleSheet({});
  status_->setText(tr("Checking the reference config (nchw, the backend's default conv)…"));
  progress_->setRange(0, 0);  // busy until the CLI says how many candidates
  clock_.start();
  setRunning(true);
  return process_->start(r);
}

void RunView::cancel() {
  if (!process_->isRunning()) return;
  process_->cancel();
  if (process_->cancelRequests() == 1) {
    status_->setText(
        tr("Cancelling: the trial in flight finishes, the finished ones stay in the results DB…"));
    cancel_->setText(tr("Stop now"));
    cancel_->setToolTip(
        tr("Interrupt again: stop at once (the trial in flight is lost, finished ones stay)"));
  }
}

void RunView::setRunning(bool running) {
  start_->setEnabled(!running);
  cancel_->setEnabled(running);
  cancel_->setText(tr("Cancel"));
  open_->setEnabled(!running && (!resultsDb_.isEmpty() || !bestTrace_.isEmpty()));
  for (QWidget* w :
       std::initializer_list<QWidget*>{model_, data_, batch_, strategy_, budget_, algorithms_,
                                       steps_, warmup_, db_, out_, traceDir_, extra_})
    w->setEnabled(!running);
  for (QLineEdit* edit : knobEdits_) edit->setEnabled(!running);
  if (running)
    ticker_->start();
  else
    ticker_->stop();
}

void RunView::tick() {
  if (progress_->maximum() == 0) return;
  const double elapsed = static_cast<double>(clock_.elapsed()) / 1000;
  QString text = tr("%1 of %2 candidates · elapsed %3")
                     .arg(progress_->value())
                     .arg(progress_->maximum())
                     .arg(seconds(elapsed));
  if (etaAtLastTrial_ >= 0) {
    const double left =
        etaAtLastTrial_ - static_cast<double>(clock_.elapsed() - lastTrialAtMs_) / 1000;
    text += tr(" · ETA %1").arg(left > 0 ? seconds(left) : tr("any moment"));
  }
  progress_->setFormat(text);
}

void RunView::applyEvent(const TuneEvent& e) {
  trials_->apply(e);
  // A strategy may plan anew as it goes (per-layer's second stage): the latest total.
  if (e.kind != TuneEvent::Kind::Start && e.kind != TuneEvent::Kind::Done && e.total > 0 &&
      e.total != progress_->maximum())
    progress_->setMaximum(e.total);
  switch (e.kind) {
    case TuneEvent::Kind::Start:
      progress_->setRange(0, std::max(e.total, 1));
      progress_->setValue(0);
      resultsDb_ = e.dbPath;
      break;
    case TuneEvent::Kind::TrialStart:
      status_->setText(tr("Measuring %1 of %2: %3").arg(e.index).arg(e.total).arg(e.candidate));
      break;
    case TuneEvent::Kind::Trial:
      progress_->setValue(e.index);
      etaAtLastTrial_ = e.eta;
      lastTrialAtMs_ = clock_.elapsed();
      if (e.index == e.total)
        status_->setText(tr("All %1 candidates measured; re-measuring the fastest two interleaved…")
                             .arg(e.total));
      if (!e.bestCandidate.isEmpty())
        best_->setText(tr("Best so far: <b>%1</b> — %L2 ex/s")
                           .arg(e.bestCandidate.toHtmlEscaped())
                           .arg(e.bestEps, 0, 'f', 1));
      break;
    case TuneEvent::Kind::Round:
      status_->setText(e.toDecide > 0 ? tr("Interleaved rounds: round %1, %2 of %3 racing; about "
                                           "%4 rounds would decide them")
                                            .arg(e.round)
                                            .arg(e.racing)
                                            .arg(e.members)
                                            .arg(e.toDecide)
                                      : tr("Interleaved rounds: round %1, %2 of %3 racing")
                                            .arg(e.round)
                                            .arg(e.racing)
                                            .arg(e.members));
      break;
    case TuneEvent::Kind::Done:
      if (!e.traces.value(QStringLiteral("best")).isEmpty())
        bestTrace_ = e.traces.value(QStringLiteral("best"));
      if (!e.dbPath.isEmpty()) resultsDb_ = e.dbPath;
      if (!e.bestCandidate.isEmpty())
        best_->setText(
            tr("%1: <b>%2</b> — %L3 ex/s<br><span style='color:#777; font-size:small'>%4</span>")
                .arg(e.interrupted ? tr("Best so far") : tr("Winner"),
                     e.bestCandidate.toHtmlEscaped())
                .arg(e.bestEps, 0, 'f', 1)
                .arg(e.decision.toHtmlEscaped()));
      break;
  }
  tick();
}

void RunView::showOutcome(const TuneOutcome& outcome) {
  if (progress_->maximum() == 0) progress_->setRange(0, 1);  // never started measuring
  switch (outcome.result) {
    case TuneOutcome::Result::Completed: {
      const TuneEvent& done = *outcome.done;
      progress_->setValue(progress_->maximum());
      progress_->setFormat(
          tr("%1 candidates · took %2").arg(progress_->maximum()).arg(seconds(done.tuneSeconds)));
      status_->setStyleSheet(kDoneStyle);
      status_->setText(tr("Done: the tuned config is in %1").arg(done.outPath));
      break;
    }
    case TuneOutcome::Result::Interrupted:
      trials_->abandonRunning(tr("stopped before it finished"));
      progress_->setFormat(tr("cancelled after %1 of %2 candidates")
                               .arg(trials_->finishedCount())
                               .arg(progress_->maximum()));
      status_->setStyleSheet(kErrorStyle);
      status_->setText(
          resultsDb_.isEmpty()
              ? tr("Cancelled: %1 trials finished.").arg(trials_->finishedCount())
              : tr("Cancelled: %1 trials kept in %2 (the CLI's --resume continues the tune).")
                    .arg(trials_->finishedCount())
                    .arg(resultsDb_));
      if (!outcome.message.isEmpty()) log_->appendPlainText(outcome.message);
      break;
    case TuneOutcome::Result::Failed:
      trials_->abandonRunning(tr("the tune failed"));
      progress_->setFormat(tr("failed"));
      status_->setStyleSheet(kErrorStyle);
      status_->setText(outcome.message);
      break;
  }
  // A DB that never got a trial has nothing to show.
  if (trials_->finishedCount() == 0) resultsDb_.clear();
  setRunning(false);
  emit runFinished(outcome);
  if (outcome.result == TuneOutcome::Result::Completed && openWhenDone_->isChecked()) openResults();
}

void RunView::openResults() {
  if (!resultsDb_.isEmpty() || !bestTrace_.isEmpty()) emit resultsReady(resultsDb_, bestTrace_);
}

}  // namespace tunescope::gui
