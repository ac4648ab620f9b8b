// Main window wiring: tabs, menus, docks, loading and error reporting.
#include "widgets/MainWindow.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextBrowser>
#include <QUrl>

#include "models/CandidatesModel.h"
#include "models/KernelTableModel.h"
#include "models/SelectionStats.h"
#include "models/TimeFormat.h"
#include "models/TraceLoader.h"
#include "profiler/FileKind.h"
#include "widgets/CandidatesView.h"
#include "widgets/CompareView.h"
#include "widgets/CriticalPathPanel.h"
#include "widgets/KernelDock.h"
#include "widgets/RunView.h"
#include "widgets/TimelineView.h"

namespace tunescope::gui {

namespace {
const QString kRecentKey = QStringLiteral("recentFiles");
const QString kHint = QStringLiteral(
    "<p style='color:#777'>Shift+drag or right-drag on the timeline to select a "
    "time window; its statistics appear here.</p>");
}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      timeline_(new TimelineView),
      candidates_(new CandidatesView),
      compare_(new CompareView),
      run_(new RunView),
      tabs_(new QTabWidget),
      kernels_(new KernelDock(this)),
      criticalPath_(new CriticalPathPanel(this)),
      selectionPanel_(new QTextBrowser),
      loader_(new TraceLoader(this)),
      compareLoaders_{new TraceLoader(this), new TraceLoader(this)} {
  setWindowTitle(tr("tunescope"));
  setAcceptDrops(true);
  tabs_->setDocumentMode(true);
  tabs_->addTab(timeline_, tr("Timeline"));
  tabs_->addTab(candidates_, tr("Candidates"));
  tabs_->addTab(compare_, tr("Compare"));
  tabs_->addTab(run_, tr("Run"));
  setCentralWidget(tabs_);
  addDockWidget(Qt::BottomDockWidgetArea, kernels_);

  auto* selectionDock = new QDockWidget(tr("Selection"), this);
  selectionDock_ = selectionDock;
  selectionDock->setObjectName(QStringLiteral("selectionDock"));
  selectionPanel_->setHtml(kHint);
  selectionPanel_->setMinimumWidth(280);
  selectionDock->setWidget(selectionPanel_);
  addDockWidget(Qt::RightDockWidgetArea, selectionDock);
  addDockWidget(Qt::RightDockWidgetArea, criticalPath_);
  criticalPath_->attach(timeline_);
  resizeDocks({kernels_}, {380}, Qt::Vertical);
  resizeDocks({selectionDock}, {340}, Qt::Horizontal);

  connect(loader_, &TraceLoader::loaded, this, &MainWindow::showDocument);
  connect(loader_, &TraceLoader::failed, this,
          [this](const QString& path, const QString& message) { showLoadError(path, message); });
  createLoadProgress();
  connect(timeline_, &TimelineView::selectionChanged, this, &MainWindow::showSelection);
  connect(timeline_, &TimelineView::selectionCleared, this, &MainWindow::showWholeTrace);
  connect(kernels_, &KernelDock::kernelSelected, timeline_, &TimelineView::setHighlightedKernel);
  connect(kernels_, &KernelDock::nextInstanceRequested, timeline_,
          &TimelineView::focusNextInstance);
  connect(kernels_, &KernelDock::previousInstanceRequested, timeline_,
          &TimelineView::focusPreviousInstance);
  connect(timeline_, &TimelineView::instanceFocused, kernels_, &KernelDock::showInstancePosition);
  connect(tabs_, &QTabWidget::currentChanged, this, &MainWindow::tabChanged);
  connect(candidates_, &CandidatesView::traceRequested, this, &MainWindow::openFile);
  connect(candidates_, &CandidatesView::compareRequested, this, &MainWindow::compareFiles);
  // A finished tune: its trials in Candidates, then (loaded off the GUI thread) the
  // best config's trace in the Timeline.
  connect(run_, &RunView::resultsReady, this,
          [this](const QString& dbPath, const QString& bestTrace) {
            if (!dbPath.isEmpty()) openResults(dbPath);
            if (!bestTrace.isEmpty()) loader_->load(bestTrace);
          });
  for (int side : {0, 1}) {
    connect(compareLoaders_[side], &TraceLoader::loaded, this,
            [this, side](TraceDocumentPtr document, qint64) {
              compareLoaded(side, std::move(document));
            });
    connect(compareLoaders_[side], &TraceLoader::failed, this,
            [this](const QString& path, const QString& message) { showLoadError(path, message); });
  }
  createMenus();
  statusBar()->showMessage(
      tr("Open a trace (tunescope, PyTorch profiler, Nsight Systems SQLite) or a results DB "
         "(Ctrl+O)"));
  resize(1500, 900);
}

// Loading shows its progress and a Cancel button in the status bar; the document on
// screen stays until a new one has loaded, so a cancel or a failure leaves it open.
void MainWindow::createLoadProgress() {
  loadProgress_ = new QProgressBar;
  loadProgress_->setRange(0, 100);
  loadProgress_->setMaximumWidth(220);
  cancelLoad_ = new QPushButton(tr("Cancel"));
  cancelLoad_->setObjectName(QStringLiteral("cancelLoadButton"));
  cancelLoad_->setToolTip(tr("Stop loading (Esc); the trace on screen stays open"));
  cancelLoad_->setShortcut(QKeySequence(Qt::Key_Escape));
  statusBar()->addPermanentWidget(loadProgress_);
  statusBar()->addPermanentWidget(cancelLoad_);
  endLoadProgress();
  connect(cancelLoad_, &QPushButton::clicked, loader_, &TraceLoader::cancel);
  connect(loader_, &TraceLoader::started, this, [this](const QString& path) {
    loadProgress_->setValue(0);
    loadProgress_->show();
    cancelLoad_->show();
    statusBar()->showMessage(tr("Loading %1…").arg(path));
  });
  connect(loader_, &TraceLoader::progress, loadProgress_, &QProgressBar::setValue);
  connect(loader_, &TraceLoader::loaded, this, &MainWindow::endLoadProgress);
  connect(loader_, &TraceLoader::failed, this, &MainWindow::endLoadProgress);
  connect(loader_, &TraceLoader::cancelled, this, [this](const QString& path) {
    endLoadProgress();
    statusBar()->showMessage(
        document_
            ? tr("Loading %1 cancelled; %2 stays open")
                  .arg(QFileInfo(path).fileName(), QFileInfo(document_->filePath()).fileName())
            : tr("Loading %1 cancelled").arg(QFileInfo(path).fileName()));
  });
}

void MainWindow::endLoadProgress() {
  loadProgress_->hide();
  cancelLoad_->hide();
}

void MainWindow::createMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::openDialog);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  file->addAction(tr("&Compare…"), QKeySequence(tr("Ctrl+K")), this, &MainWindow::compareDialog);
  file->addAction(tr("&Export Timeline PNG…"), QKeySequence(tr("Ctrl+E")), this,
                  &MainWindow::exportDialog);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("Zoom &In (W, +)"), timeline_, &TimelineView::zoomIn);
  view->addAction(tr("Zoom &Out (S, -)"), timeline_, &TimelineView::zoomOut);
  view->addAction(tr("&Fit All (F, Home)"), timeline_, &TimelineView::fitAll);
  view->addAction(tr("Next Instance (N)"), timeline_, &TimelineView::focusNextInstance);
  view->addAction(tr("Previous Instance (P)"), timeline_, &TimelineView::focusPreviousInstance);
  rebuildRecentMenu();
}

void MainWindow::openFile(const QString& path) {
  switch (profiler::sniff_file(path.toStdString())) {
    case profiler::FileKind::results_db:
    case profiler::FileKind::other_sqlite: return openResults(path);
    default: return loader_->load(path);  // a bad file: the trace reader's error names it
  }
}

namespace {
// The local file a drag carries, or an empty string.
QString droppedFile(const QMimeData* data) {
  if (!data || !data->hasUrls()) return {};
  for (const QUrl& url : data->urls())
    if (url.isLocalFile()) return url.toLocalFile();
  return {};
}
}  // namespace

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!droppedFile(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QString path = droppedFile(event->mimeData());
  if (path.isEmpty()) return;
  event->acceptProposedAction();
  openFile(path);
}

void MainWindow::openResults(const QString& path) {
  QString error;
  if (!candidates_->openDb(path, &error)) {
    showLoadError(path, error, tr("Cannot open results DB"));
    return;
  }
  tabs_->setCurrentWidget(candidates_);
  setWindowTitle(tr("%1 — tunescope").arg(QFileInfo(path).fileName()));
  statusBar()->showMessage(tr("%1: %2 configs").arg(path).arg(candidates_->model()->rowCount()));
  addRecentFile(path);
  emit resultsLoaded();
}

void MainWindow::compareFiles(const QString& pathA, const QString& pathB) {
  comparePending_[0].reset();
  comparePending_[1].reset();
  compareLoaders_[0]->load(pathA);
  compareLoaders_[1]->load(pathB);
}

void MainWindow::compareWithCurrent(const QString& pathB) {
  if (!document_) return;
  comparePending_[0] = document_;
  comparePending_[1].reset();
  compareLoaders_[1]->load(pathB);
}

void MainWindow::compareLoaded(int side, TraceDocumentPtr document) {
  comparePending_[side] = std::move(document);
  if (!comparePending_[0] || !comparePending_[1]) return;
  compare_->setDocuments(comparePending_[0], comparePending_[1]);
  tabs_->setCurrentWidget(compare_);
  statusBar()->showMessage(tr("Comparing %1 (A) with %2 (B)")
                               .arg(QFileInfo(comparePending_[0]->filePath()).fileName(),
                                    QFileInfo(comparePending_[1]->filePath()).fileName()));
  emit compareReady();
}

void MainWindow::compareDialog() {
  const QString filter = tr("Traces (*.json *.json.gz *.gz *.sqlite);;All files (*)");
  if (document_) {
    const QString b = QFileDialog::getOpenFileName(
        this, tr("Compare %1 with").arg(QFileInfo(document_->filePath()).fileName()),
        QFileInfo(document_->filePath()).absolutePath(), filter);
    if (!b.isEmpty()) compareWithCurrent(b);
    return;
  }
  const QString a =
      QFileDialog::getOpenFileName(this, tr("Compare: first trace (A)"), QString(), filter);
  if (a.isEmpty()) return;
  const QString b = QFileDialog::getOpenFileName(this, tr("Compare: second trace (B)"),
                                                 QFileInfo(a).absolutePath(), filter);
  if (!b.isEmpty()) compareFiles(a, b);
}

void MainWindow::tabChanged(int index) {
  // The kernel table and selection panel describe the timeline's trace only.
  const bool timeline = index == TimelineTab;
  kernels_->setVisible(timeline);
  selectionDock_->setVisible(timeline);
  criticalPath_->setVisible(timeline);
}

void MainWindow::openDialog() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open trace or results DB"), QString(),
                                   tr("Traces and results DBs (*.json *.json.gz *.gz *.sqlite "
                                      "*.sqlite3 *.db);;Chrome traces, ours or PyTorch's "
                                      "(*.json *.json.gz *.gz);;Nsight Systems SQLite exports and "
                                      "results DBs (*.sqlite *.sqlite3 *.db);;All files "
                                      "(*)"));
  if (!path.isEmpty()) openFile(path);
}

void MainWindow::exportDialog() {
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export timeline"), QStringLiteral("timeline.png"), tr("PNG images (*.png)"));
  if (!path.isEmpty() && !exportTimelinePng(path))
    QMessageBox::warning(this, tr("Export failed"), tr("Could not write %1").arg(path));
}

bool MainWindow::exportTimelinePng(const QString& path) {
  return timeline_->grab().save(path, "PNG");
}

void MainWindow::showDocument(TraceDocumentPtr document, qint64 elapsedMs) {
  document_ = std::move(document);
  tabs_->setCurrentWidget(timeline_);
  timeline_->setDocument(document_);
  criticalPath_->setDocument(document_);
  kernels_->model()->setRows(document_->kernelTable(), document_->kernelPassRates());
  kernels_->showInstancePosition(0, 0);
  showWholeTrace();
  const QFileInfo info(document_->filePath());
  setWindowTitle(tr("%1 — tunescope").arg(info.fileName()));
  const auto& meta = document_->trace().metadata;
  statusBar()->showMessage(
      tr("%1: %2 activities, %3 ranges, lanes: %4, span %5 · %6 · loaded in %7 ms")
          .arg(info.fileName())
          .arg(document_->trace().activities.size())
          .arg(document_->trace().ranges.size())
          .arg(document_->lanes().size())
          .arg(formatDuration(static_cast<double>(document_->extent().duration_ns())))
          .arg(QString::fromStdString(meta.backend.empty() ? "?" : meta.backend))
          .arg(elapsedMs));
  addRecentFile(document_->filePath());
  timeline_->setFocus();
  emit documentLoaded();
}

void MainWindow::showLoadError(const QString& path, const QString& message, const QString& title) {
  statusBar()->showMessage(tr("Could not open %1").arg(path));
  // Non-blocking, so a scripted or tested session never hangs on it.
  auto* box = new QMessageBox(
      QMessageBox::Critical, title.isEmpty() ? tr("Cannot open trace") : title,
      tr("Could not open %1").arg(QFileInfo(path).fileName()), QMessageBox::Ok, this);
  box->setInformativeText(message);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setObjectName(QStringLiteral("loadErrorDialog"));
  box->open();
  emit loadFailed(message);
}

void MainWindow::showSelection(qint64 startNs, qint64 endNs) {
  if (!document_) return;
  const SelectionStats stats = computeSelectionStats(document_->trace(), {startNs, endNs});
  selectionPanel_->setHtml(
      selectionStatsHtml(stats, document_->extent().start_ns, tr("Selection")));
}

void MainWindow::showWholeTrace() {
  if (!document_) return selectionPanel_->setHtml(kHint);
  const profiler::Interval extent = document_->extent();
  const SelectionStats whole{extent, document_->summary()};
  selectionPanel_->setHtml(kHint + selectionStatsHtml(whole, extent.start_ns, tr("Whole trace")));
}

QStringList MainWindow::recentFiles() const { return QSettings().value(kRecentKey).toStringList(); }

void MainWindow::addRecentFile(const QString& path) {
  QStringList files = recentFiles();
  const QString absolute = QFileInfo(path).absoluteFilePath();
  files.removeAll(absolute);
  files.prepend(absolute);
  while (files.size() > kMaxRecentFiles) files.removeLast();
  QSettings().setValue(kRecentKey, files);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  const QStringList files = recentFiles();
  for (const QString& f : files) recentMenu_->addAction(f, this, [this, f] { openFile(f); });
  recentMenu_->setEnabled(!files.isEmpty());
}

}  // namespace tunescope::gui
