// The Run tab against the real `tunescope` CLI (built in this tree), offscreen: a tiny
// tune runs to completion while the GUI stays live, fills the trials table, and its
// results open in the Candidates and Timeline tabs; Cancel after the first trial makes
// the CLI exit 130 with the finished trials in the DB (a second Cancel ends it at once);
// a bad option shows the CLI's own message and Start comes back. The form's knob rows
// are the CLI's catalog (`tunescope knobs --json`), one per knob, and a CLI that is not
// there leaves a message in their place. The Model field's "…" picks an ONNX file, whose
// tune runs and opens its trace, which names the graph's nodes.
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>
#include <cerrno>
#include <csignal>
#include <optional>
#include <set>

#include "models/CandidatesModel.h"
#include "models/TuneTrialsModel.h"
#include "widgets/CandidatesView.h"
#include "widgets/MainWindow.h"
#include "widgets/RunView.h"

using namespace tunescope::gui;

namespace {

// lenet5 on a little fake data, batch 8: 2 layouts x the given algorithms.
TuneRequest tinyTune(const QString& dir, const QStringList& algorithms, int steps) {
  TuneRequest r = TuneRequest::inFolder(dir);
  r.model = QStringLiteral("lenet5");
  r.data = QStringLiteral("fake");
  r.batch = 8;
  r.knobLists = {{QStringLiteral("layout"), QStringLiteral("nchw,nhwc")},
                 {QStringLiteral("threads"), QStringLiteral("1")}};
  r.algorithms = algorithms;
  r.steps = steps;
  r.warmup = 1;
  r.extraArguments = QStringLiteral("--fake-count 64 --test-limit 16");
  // Every candidate once (2 layouts x the algorithms), whichever strategy auto would pick.
  r.strategy = QStringLiteral("exhaustive");
  return r;
}

}  // namespace

class RunViewTest : public QObject {
  Q_OBJECT
 private:
  std::unique_ptr<MainWindow> window_;
  std::optional<TuneOutcome> outcome_;

  RunView* freshRunView() {
    window_ = std::make_unique<MainWindow>();
    window_->resize(1400, 900);
    window_->show();
    RunView* run = window_->runView();
    window_->tabs()->setCurrentWidget(run);
    run->setCliProgram(QStringLiteral(TUNESCOPE_CLI_PATH));
    outcome_.reset();
    connect(run, &RunView::runFinished, this, [this](const TuneOutcome& o) { outcome_ = o; });
    return run;
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings (recent files) go to a test location
    QCoreApplication::setOrganizationName(QStringLiteral("tunescope-test"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_runview"));
  }

  void formRoundTripsTheRequest() {
    RunView* run = freshRunView();
    TuneRequest r =
        tinyTune(QStringLiteral("/tmp/x"), {QStringLiteral("direct"), QStringLiteral("gemm")}, 3);
    r.strategy = QStringLiteral("per-layer");
    r.budgetSeconds = 60;
    r.knobLists[QStringLiteral("streams")] = QStringLiteral("1,2");
    r.knobLists[QStringLiteral("fft_tile")] =
        QStringLiteral("auto,16");  // declared by an algorithm, not the engine
    r.knobCatalog = run->knobRows();
    run->setRequest(r);
    QCOMPARE(run->request().knobLists, r.knobLists);
    QCOMPARE(run->request().arguments(), r.arguments());
    const QStringList args = run->request().arguments();
    QCOMPARE(args.at(args.indexOf(QStringLiteral("--fft-tile-list")) + 1),
             QStringLiteral("auto,16"));
    QCOMPARE(args.at(args.indexOf(QStringLiteral("--layout-list")) + 1),
             QStringLiteral("nchw,nhwc"));
    for (const char* strategy : {"auto", "halving"}) {  // every strategy the CLI knows is offered
      r.strategy = QLatin1String(strategy);
      run->setRequest(r);
      QCOMPARE(run->request().strategy, r.strategy);
    }
  }

  void formHasOneRowPerKnobOfTheCatalog() {
    RunView* run = freshRunView();
    QString error;
    const std::optional<QVector<KnobRow>> catalog =
        loadKnobRows(QStringLiteral(TUNESCOPE_CLI_PATH), &error);
    QVERIFY2(catalog, qPrintable(error));
    QCOMPARE(run->knobRows().size(), catalog->size());
    QVERIFY(run->knobMessage()->isHidden());
    QStringList keys;
    for (const KnobRow& knob : *catalog) {
      keys << knob.key;
      QLineEdit* edit = run->knobEdit(knob.key);
      QVERIFY2(edit, qPrintable(knob.key));
      QTRY_VERIFY(edit->isVisible());  // shown by the layout, from the event loop
      QCOMPARE(edit->placeholderText(), knob.tuneDefault.join(QLatin1Char(',')));
      QVERIFY(edit->toolTip().contains(knob.help));
      QVERIFY(edit->toolTip().contains(knob.values));
    }
    for (const char* key :
         {"layout", "threads", "streams", "fft_tile", "fft_workspace", "winograd_tile"})
      QVERIFY2(keys.contains(QLatin1String(key)), key);
    // A fresh form: threads 1,N as before, the rest empty (the CLI's tune default).
    QCOMPARE(run->knobEdit(QStringLiteral("threads"))->text(), TuneRequest::defaultThreads());
    QVERIFY(run->knobEdit(QStringLiteral("layout"))->text().isEmpty());
    QCOMPARE(run->request().knobLists,
             (QMap<QString, QString>{{QStringLiteral("threads"), TuneRequest::defaultThreads()}}));

    // Typed lists become the catalog's list flags, in its order, before --progress jsonl.
    run->knobEdit(QStringLiteral("winograd_tile"))->setText(QStringLiteral(" f2,f4 "));
    run->knobEdit(QStringLiteral("layout"))->setText(QStringLiteral("nhwc"));
    const QStringList args = run->request().arguments();
    const qsizetype layout = args.indexOf(QStringLiteral("--layout-list"));
    const qsizetype threads = args.indexOf(QStringLiteral("--threads-list"));
    const qsizetype winograd = args.indexOf(QStringLiteral("--winograd-tile-list"));
    QVERIFY(layout > 0 && layout < threads && threads < winograd);
    QCOMPARE(args.at(winograd + 1), QStringLiteral("f2,f4"));
    QVERIFY(!args.contains(QStringLiteral("--streams-list")));
    QCOMPARE(args.mid(args.size() - 2),
             (QStringList{QStringLiteral("--progress"), QStringLiteral("jsonl")}));
  }

  void noCliShowsAMessageInPlaceOfTheKnobRows() {
    QTemporaryDir dir;
    RunView* run = freshRunView();
    run->knobEdit(QStringLiteral("streams"))->setText(QStringLiteral("1,2"));
    const QString missing = dir.filePath(QStringLiteral("no-such-tunescope"));
    run->setCliProgram(missing);
    QVERIFY(run->knobRows().isEmpty());
    QVERIFY(!run->knobEdit(QStringLiteral("threads")));
    QVERIFY(run->knobMessage()->isVisible());
    QVERIFY2(run->knobMessage()->text().contains(missing), qPrintable(run->knobMessage()->text()));
    QVERIFY(run->knobMessage()->text().contains(QStringLiteral("Other options")));
    // The rest of the form still works: extra arguments pass knob lists by hand.
    TuneRequest r = tinyTune(dir.path(), {QStringLiteral("direct")}, 1);
    r.extraArguments = QStringLiteral("--threads-list 1,2");
    run->setRequest(r);
    const QStringList args = run->request().arguments();
    QVERIFY(args.join(QLatin1Char(' '))
                .contains(QStringLiteral("--threads-list 1,2 --progress jsonl")));
    QVERIFY(!args.contains(QStringLiteral("--layout-list")));

    // The CLI back: rows again, threads from the defaults.
    run->setCliProgram(QStringLiteral(TUNESCOPE_CLI_PATH));
    QVERIFY(run->knobMessage()->isHidden());
    QVERIFY(!run->knobRows().isEmpty());
    QCOMPARE(run->knobEdit(QStringLiteral("threads"))->text(), TuneRequest::defaultThreads());
  }

  void modelPickerTakesAnOnnxFileWhoseTuneOpensItsTrace() {
    const QString opsnet =
        QDir(QStringLiteral(TUNESCOPE_TEST_DATA_DIR "/../../models/zoo/opsnet.onnx"))
            .absolutePath();
    QVERIFY(QFile::exists(opsnet));
    RunView* run = freshRunView();
    // The "…" button asks the picker (Qt's modal file dialog, stood in for here) for an
    // .onnx file and puts its choice in the field; a cancelled pick changes nothing.
    QString askedFilter;
    QString answer = opsnet;
    run->setModelFilePicker([&](QWidget*, const QString&, const QString& filter) {
      askedFilter = filter;
      return answer;
    });
    run->modelBrowseButton()->click();
    QVERIFY(askedFilter.contains(QStringLiteral("(*.onnx)")));
    QCOMPARE(run->modelField()->currentText(), opsnet);
    answer.clear();
    run->modelBrowseButton()->click();
    QCOMPARE(run->modelField()->currentText(), opsnet);

    QTemporaryDir dir;
    QSignalSpy documentLoaded(window_.get(), &MainWindow::documentLoaded);
    TuneRequest r = run->request();
    QCOMPARE(r.model, opsnet);
    const TuneRequest tiny = tinyTune(dir.path(), {QStringLiteral("direct")}, 1);
    r.data = tiny.data;
    r.batch = 4;
    r.knobLists = {{QStringLiteral("layout"), QStringLiteral("nchw")},
                   {QStringLiteral("threads"), QStringLiteral("1")}};
    r.algorithms = tiny.algorithms;
    r.steps = 1;
    r.warmup = 0;
    r.strategy = tiny.strategy;
    r.dbPath = tiny.dbPath;
    r.outPath = tiny.outPath;
    r.traceDir = tiny.traceDir;
    r.extraArguments = QStringLiteral("--fake-count 16 --test-limit 8");
    run->setRequest(r);
    QVERIFY(run->start());
    QTRY_VERIFY_WITH_TIMEOUT(outcome_.has_value(), 100'000);
    if (outcome_->exitCode != 0 &&
        run->logView()->toPlainText().contains(QStringLiteral("without ONNX support")))
      QSKIP("this tunescope was built without ONNX support (libonnx-dev)");
    QVERIFY2(outcome_->exitCode == 0, qPrintable(run->logView()->toPlainText()));
    QTRY_COMPARE_WITH_TIMEOUT(documentLoaded.count(), 1, 20'000);
    const QString bestTrace = QDir(dir.path()).filePath(QStringLiteral("traces/best.json"));
    QCOMPARE(window_->document()->filePath(), bestTrace);
    QFile trace(bestTrace);
    QVERIFY(trace.open(QIODevice::ReadOnly));
    const QByteArray text = trace.readAll();
    QVERIFY(text.contains("/grouped/Conv"));  // layers named by ONNX node
    QVERIFY(text.contains("/Concat"));
  }

  void tinyTuneRunsToCompletionAndOpensItsResults() {
    QTemporaryDir dir;
    RunView* run = freshRunView();
    QSignalSpy resultsLoaded(window_.get(), &MainWindow::resultsLoaded);
    QSignalSpy documentLoaded(window_.get(), &MainWindow::documentLoaded);
    run->setRequest(tinyTune(dir.path(), {QStringLiteral("direct"), QStringLiteral("gemm")}, 2));
    // While the final interleaved rounds run, the status line says how far they are.
    QStringList roundStatus;
    connect(run->process(), &TuneProcess::tuneEvent, run, [&roundStatus, run](const TuneEvent& e) {
      if (e.kind == TuneEvent::Kind::Round) roundStatus << run->statusLabel()->text();
    });

    QVERIFY(run->start());
    // start() returned at once: the child runs while the event loop does.
    QVERIFY(run->process()->isRunning() || outcome_);
    QVERIFY(!run->startButton()->isEnabled());
    QVERIFY(run->cancelButton()->isEnabled());
    QVERIFY(!run->start());  // one tune at a time
    QVERIFY(!run->knobEdit(QStringLiteral("layout"))->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(outcome_.has_value(), 100'000);

    QCOMPARE(int(outcome_->result), int(TuneOutcome::Result::Completed));
    QCOMPARE(outcome_->exitCode, 0);
    TuneTrialsModel* trials = run->trialsModel();
    QCOMPARE(trials->rowCount(), 4);
    QCOMPARE(trials->finishedCount(), 4);
    std::set<QString> labels;
    for (const TuneEvent& t : trials->rows()) {
      QCOMPARE(t.status, QStringLiteral("ok"));
      QVERIFY(t.medianEps > 0);
      labels.insert(t.candidate);
    }
    QCOMPARE(labels.size(), size_t(4));
    QCOMPARE(run->progressBar()->maximum(), 4);
    QCOMPARE(run->progressBar()->value(), 4);
    // (No rounds when the sweep raced every candidate but one out: the decision says so.)
    QCOMPARE(!roundStatus.isEmpty(),
             outcome_->done->decision.contains(QStringLiteral("interleaved rounds")));
    for (const QString& status : roundStatus)
      QVERIFY2(status.startsWith(QStringLiteral("Interleaved rounds: round ")), qPrintable(status));
    QVERIFY(run->bestLabel()->text().contains(outcome_->done->bestCandidate));
    QVERIFY(run->logView()->toPlainText().contains(QStringLiteral("winner: ")));
    QVERIFY(run->startButton()->isEnabled());
    QVERIFY(!run->cancelButton()->isEnabled());
    QVERIFY(run->openButton()->isEnabled());
    QVERIFY(run->knobEdit(QStringLiteral("layout"))->isEnabled());

    // Opened by itself: the DB in Candidates, the best trace on the timeline.
    QCOMPARE(resultsLoaded.count(), 1);
    const CandidatesModel* candidates = window_->candidatesView()->model();
    QCOMPARE(candidates->rowCount(), 4);
    std::set<QString> candidateLabels;
    for (const CandidateRow& row : candidates->rows()) candidateLabels.insert(row.label);
    QCOMPARE(candidateLabels, labels);
    QVERIFY(candidates->bestRow());
    const QString bestTrace = QDir(dir.path()).filePath(QStringLiteral("traces/best.json"));
    QCOMPARE(candidates->bestRow()->tracePath, bestTrace);
    QTRY_COMPARE_WITH_TIMEOUT(documentLoaded.count(), 1, 20'000);
    QCOMPARE(window_->document()->filePath(), bestTrace);
  }

  void perLayerTuneEndsWithEveryRowFinishedAndTheBarAtItsLastTotal() {
    // Per-layer races its candidates in interleaved rounds: each stage's new members run
    // together (a running row each, replaced by its trial when the stage ends), and its
    // second stage plans anew (a smaller total than the first).
    QTemporaryDir dir;
    RunView* run = freshRunView();
    TuneRequest request =
        tinyTune(dir.path(), {QStringLiteral("direct"), QStringLiteral("gemm")}, 2);
    request.strategy = QStringLiteral("per-layer");
    run->setRequest(request);
    int lastTotal = 0;
    connect(run->process(), &TuneProcess::tuneEvent, run, [&lastTotal](const TuneEvent& e) {
      if (e.kind == TuneEvent::Kind::Trial) lastTotal = e.total;
    });
    QVERIFY(run->start());
    QTRY_VERIFY_WITH_TIMEOUT(outcome_.has_value(), 100'000);
    QCOMPARE(int(outcome_->result), int(TuneOutcome::Result::Completed));
    TuneTrialsModel* trials = run->trialsModel();
    QVERIFY(trials->rowCount() >= 2);
    QCOMPARE(trials->finishedCount(), trials->rowCount());  // no row left "running"
    QVERIFY(lastTotal > 0);
    QCOMPARE(run->progressBar()->maximum(), lastTotal);
    QCOMPARE(run->progressBar()->value(), lastTotal);
  }

  void cancelAfterTheFirstTrialKeepsTheFinishedTrials() {
    QTemporaryDir dir;
    RunView* run = freshRunView();
    QSignalSpy resultsLoaded(window_.get(), &MainWindow::resultsLoaded);
    run->setRequest(tinyTune(dir.path(),
                             {QStringLiteral("direct"), QStringLiteral("gemm"),
                              QStringLiteral("fft-fftw"), QStringLiteral("fft-own")},
                             12));
    connect(run->process(), &TuneProcess::tuneEvent, run, [run](const TuneEvent& e) {
      if (e.kind == TuneEvent::Kind::Trial && run->process()->cancelRequests() == 0) run->cancel();
    });
    QVERIFY(run->start());
    QTRY_VERIFY_WITH_TIMEOUT(outcome_.has_value(), 100'000);

    QCOMPARE(int(outcome_->result), int(TuneOutcome::Result::Interrupted));
    QCOMPARE(outcome_->exitCode, 130);  // SIGINT handled by the CLI, not a kill
    QVERIFY(outcome_->done && outcome_->done->interrupted);
    const int finished = run->trialsModel()->finishedCount();
    QVERIFY(finished >= 1);
    QVERIFY2(finished < 8, "the tune was not stopped");
    QVERIFY(run->statusLabel()->text().contains(QStringLiteral("Cancelled")));
    QVERIFY(run->startButton()->isEnabled());
    QCOMPARE(resultsLoaded.count(), 0);  // a partial tune is not opened by itself
    QVERIFY(!QFileInfo::exists(QDir(dir.path()).filePath(QStringLiteral("tuned.json"))));

    // The DB keeps every finished trial, and the Open button shows it.
    CandidatesModel db;
    QString error;
    QVERIFY2(db.load(QDir(dir.path()).filePath(QStringLiteral("results.sqlite")), &error),
             qPrintable(error));
    QVERIFY(db.rowCount() >= finished);
    QVERIFY(run->openButton()->isEnabled());
    run->openButton()->click();
    QCOMPARE(resultsLoaded.count(), 1);
    QCOMPARE(window_->candidatesView()->model()->rowCount(), db.rowCount());
  }

  void secondCancelStopsAtOnce() {
    QTemporaryDir dir;
    RunView* run = freshRunView();
    run->setRequest(tinyTune(dir.path(),
                             {QStringLiteral("direct"), QStringLiteral("gemm"),
                              QStringLiteral("fft-fftw"), QStringLiteral("fft-own")},
                             40));
    // After the first trial, the next one starts: cancel, and once the CLI said it got
    // the signal (two pending SIGINTs would merge into one), cancel again.
    connect(run->process(), &TuneProcess::tuneEvent, run, [run](const TuneEvent& e) {
      if (e.kind == TuneEvent::Kind::TrialStart && e.index == 2 &&
          run->process()->cancelRequests() == 0) {
        run->cancel();
        QVERIFY(run->cancelButton()->isEnabled());
        QCOMPARE(run->cancelButton()->text(), QStringLiteral("Stop now"));
      }
    });
    connect(run->process(), &TuneProcess::logText, run, [run](const QString& text) {
      if (text.contains(QStringLiteral("tunescope: interrupted")) &&
          run->process()->cancelRequests() == 1)
        run->cancel();
    });
    QVERIFY(run->start());
    QTRY_VERIFY_WITH_TIMEOUT(outcome_.has_value(), 100'000);
    QCOMPARE(int(outcome_->result), int(TuneOutcome::Result::Interrupted));
    QCOMPARE(outcome_->exitCode, -1);  // ended by the second SIGINT, not by exit()
    QVERIFY(!outcome_->done);
    QCOMPARE(run->trialsModel()->finishedCount(), 1);
    QCOMPARE(run->trialsModel()->rowCount(), 2);  // the trial in flight, marked not finished
    CandidatesModel db;
    QVERIFY(db.load(QDir(dir.path()).filePath(QStringLiteral("results.sqlite")), nullptr));
    QVERIFY(db.rowCount() >= 1);
    QVERIFY(run->startButton()->isEnabled());
  }

  void closingTheWindowStopsTheTune() {
    QTemporaryDir dir;
    RunView* run = freshRunView();
    run->setRequest(tinyTune(dir.path(), {QStringLiteral("direct"), QStringLiteral("gemm")}, 40));
    QVERIFY(run->start());
    QTRY_VERIFY_WITH_TIMEOUT(run->trialsModel()->rowCount() > 0, 60'000);
    const auto pid = static_cast<pid_t>(run->process()->processId());
    QVERIFY(pid > 0);
    window_.reset();
    QCOMPARE(::kill(pid, 0), -1);  // gone and reaped
    QCOMPARE(errno, ESRCH);
    QVERIFY(!outcome_);
  }

  void badOptionShowsTheCliErrorAndStartComesBack() {
    QTemporaryDir dir;
    RunView* run = freshRunView();
    TuneRequest r = tinyTune(dir.path(), {QStringLiteral("direct")}, 1);
    r.batch = 0;
    run->setRequest(r);
    QVERIFY(run->start());
    QTRY_VERIFY_WITH_TIMEOUT(outcome_.has_value(), 30'000);
    QCOMPARE(int(outcome_->result), int(TuneOutcome::Result::Failed));
    QCOMPARE(outcome_->exitCode, 2);
    QCOMPARE(outcome_->message,
             QStringLiteral("tunescope: error: batch (--batch) must be >= 1, got 0"));
    QCOMPARE(run->statusLabel()->text(), outcome_->message);
    QVERIFY(run->logView()->toPlainText().contains(outcome_->message));
    QCOMPARE(run->trialsModel()->rowCount(), 0);
    QVERIFY(run->startButton()->isEnabled());
    QVERIFY(!run->cancelButton()->isEnabled());
    QVERIFY(!run->openButton()->isEnabled());

    // A CLI that is not there: the message names it.
    outcome_.reset();
    run->process()->setProgram(dir.filePath(QStringLiteral("no-such-tunescope")));
    QVERIFY(run->start());
    QTRY_VERIFY_WITH_TIMEOUT(outcome_.has_value(), 10'000);
    QCOMPARE(int(outcome_->result), int(TuneOutcome::Result::Failed));
    QVERIFY2(outcome_->message.contains(QStringLiteral("no-such-tunescope")),
             qPrintable(outcome_->message));
    QCOMPARE(run->statusLabel()->text(), outcome_->message);
    QVERIFY(run->startButton()->isEnabled());
  }
};

QTEST_MAIN(RunViewTest)
#include "tst_runview.moc"
