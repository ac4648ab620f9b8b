// The Candidates model fills from a results DB written through the tuner's ResultsDb:
// counts, ranking order, statuses, ratios, re-measurements and the trace mapping; a
// file that is not our DB fails with a message naming it. The Candidates tab opens
// through MainWindow and a click on a mapped trial loads its trace.
#include <sqlite3.h>
#include <QDir>
#include <QMessageBox>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QtTest>

#include "GuiTestResults.h"
#include "GuiTestTraces.h"
#include "models/CandidatesModel.h"
#include "widgets/CandidatesChart.h"
#include "widgets/CandidatesView.h"
#include "widgets/MainWindow.h"

using namespace tunescope;
using namespace tunescope::gui;

namespace {
// A trace whose metadata names `c` as its config, as Measurement.cpp writes them.
QString writeTuneTrace(const QString& dir, const QString& name, const RunConfig& c) {
  QDir().mkpath(dir);
  profiler::Trace t = test_support::smallTrace();
  t.metadata.config = to_json_text(c);
  t.metadata.extra["candidate"] = c.label();
  const QString path = QDir(dir).filePath(name);
  profiler::ChromeTraceWriter().write(t, path.toStdString());
  return path;
}
}  // namespace

class CandidatesModelTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString db_;

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("tunescope-test"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_candidatesmodel"));
    db_ = test_support::writeResultsDb(dir_);
  }

  void countsAndProblems() {
    CandidatesModel model;
    QString error;
    QVERIFY2(model.load(db_, &error), qPrintable(error));
    QCOMPARE(model.problems().size(), size_t(1));
    QCOMPARE(model.problems().front().label, QStringLiteral("lenet5 · batch 32"));
    // 8 DB rows, 6 distinct configs (two re-measured).
    QCOMPARE(model.rowCount(), 6);
    QCOMPARE(model.columnCount(), int(CandidatesModel::ColumnCount));
    int ok = 0;
    for (const CandidateRow& r : model.rows()) ok += r.ok();
    QCOMPARE(ok, 3);
  }

  void ranking_data() {
    QTest::addColumn<int>("row");
    QTest::addColumn<QString>("label");
    QTest::addColumn<QString>("status");
    QTest::addColumn<double>("eps");
    QTest::addColumn<QString>("ratio");
    QTest::addColumn<int>("measurements");
    QTest::newRow("best: the re-measured fastest") << 0 << "nhwc conv=gemm threads=2"
                                                   << "ok" << 1450.0 << "1.46×" << 2;
    QTest::newRow("baseline, latest figures") << 1 << "nchw conv=direct threads=1"
                                              << "ok" << 990.0 << "1.00×" << 2;
    QTest::newRow("slower than baseline") << 2 << "nhwc conv=direct threads=2 streams=2"
                                          << "ok" << 800.0 << "0.81×" << 1;
    QTest::newRow("invalid after ok") << 3 << "nchw conv=fft threads=2"
                                      << "invalid" << 0.0 << "–" << 1;
    QTest::newRow("failed after invalid") << 4 << "nchw conv=winograd threads=1"
                                          << "failed" << 0.0 << "–" << 1;
    QTest::newRow("skipped last") << 5 << "nhwc conv=fft threads=1"
                                  << "skipped" << 0.0 << "–" << 1;
  }
  void ranking() {
    QFETCH(int, row);
    QFETCH(QString, label);
    QFETCH(QString, status);
    QFETCH(double, eps);
    QFETCH(QString, ratio);
    QFETCH(int, measurements);
    CandidatesModel model;
    QVERIFY(model.load(db_, nullptr));
    const CandidateRow& r = model.rows()[size_t(row)];
    QCOMPARE(r.label, label);
    QCOMPARE(r.status, status);
    QCOMPARE(r.medianEps, eps);
    QCOMPARE(r.measurements, measurements);
    QCOMPARE(model.index(row, CandidatesModel::StatusColumn).data().toString(), status);
    QCOMPARE(model.index(row, CandidatesModel::RatioColumn).data().toString(), ratio);
    QCOMPARE(model.index(row, CandidatesModel::RankColumn).data().toInt(), row + 1);
    QCOMPARE(r.best, row == 0);
    QCOMPARE(r.baseline, row == 1);
  }

  void reasonsAndRatio() {
    CandidatesModel model;
    QVERIFY(model.load(db_, nullptr));
    QCOMPARE(model.index(3, CandidatesModel::ReasonColumn).data().toString(),
             QStringLiteral("loss differs from the reference"));
    QCOMPARE(model.index(4, CandidatesModel::ReasonColumn).data().toString(),
             QStringLiteral("out of memory"));
    QCOMPARE(model.ratioToBaseline(model.rows()[0]), 1450.0 / 990.0);
    QCOMPARE(model.index(0, CandidatesModel::SpreadColumn).data().toString(),
             QStringLiteral("6.0%"));
    QVERIFY(model.index(0, CandidatesModel::ConfigColumn)
                .data()
                .toString()
                .endsWith(QStringLiteral("(best)")));
  }

  void notOurDb_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("another application's SQLite") << "foreign";
    QTest::newRow("not SQLite at all") << "text";
    QTest::newRow("empty file") << "empty";
    QTest::newRow("missing file") << "missing";
  }
  void notOurDb() {
    QFETCH(QString, kind);
    const QString path = dir_.filePath(QStringLiteral("bad-%1.db").arg(kind));
    if (kind == QLatin1String("foreign")) {
      sqlite3* db = nullptr;
      QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
      QCOMPARE(sqlite3_exec(db, "CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x');",
                            nullptr, nullptr, nullptr),
               SQLITE_OK);
      sqlite3_close(db);
    } else if (kind != QLatin1String("missing")) {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      if (kind == QLatin1String("text"))
        f.write("this is not a database, it is a text file of some length\n");
    }
    const QByteArray before = QFile::exists(path) ? [&] {
      QFile f(path);
      f.open(QIODevice::ReadOnly);
      return f.readAll();
    }() : QByteArray();
    CandidatesModel model;
    QVERIFY(model.load(db_, nullptr));
    QString error;
    QVERIFY(!model.load(path, &error));
    QVERIFY2(error.contains(path), qPrintable(error));
    QCOMPARE(model.rowCount(), 6);  // the previous DB stays shown
    QCOMPARE(model.dbPath(), db_);
    if (kind == QLatin1String("missing")) QVERIFY(!QFile::exists(path));  // never created
    if (kind == QLatin1String("empty"))
      QCOMPARE(QFileInfo(path).size(), qint64(0));  // never written
    if (kind == QLatin1String("foreign")) {
      QFile f(path);
      QVERIFY(f.open(QIODevice::ReadOnly));
      QCOMPARE(f.readAll(), before);
    }
  }

  void mapsTuneTraces() {
    QTemporaryDir dir;
    const QString db = test_support::writeResultsDb(dir);
    // `tune --trace-dir traces` next to the DB: found on load.
    const QString best =
        writeTuneTrace(dir.filePath(QStringLiteral("traces")), QStringLiteral("best.json"),
                       test_support::config(Layout::NHWC, "gemm", 2));
    const QString base =
        writeTuneTrace(dir.filePath(QStringLiteral("traces")), QStringLiteral("baseline.json"),
                       test_support::config(Layout::NCHW, "direct", 1));
    CandidatesModel model;
    QVERIFY(model.load(db, nullptr));
    QVERIFY(model.bestRow() && model.baselineRow());
    QCOMPARE(model.bestRow()->tracePath, best);
    QCOMPARE(model.baselineRow()->tracePath, base);
    QCOMPARE(model.index(0, CandidatesModel::TraceColumn).data().toString(),
             QStringLiteral("best.json"));
    QVERIFY(model.rows()[2].tracePath.isEmpty());
    // Any other folder, any file name: matched by the config each trace carries.
    QTemporaryDir other;
    const QString slow = writeTuneTrace(other.path(), QStringLiteral("slow.json"),
                                        test_support::config(Layout::NHWC, "direct", 2, 2));
    QFile junk(other.filePath(QStringLiteral("notes.json")));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write("{\"not\": \"a trace\"}");
    junk.close();
    QCOMPARE(model.mapTraceDirectory(other.path()), 1);
    QCOMPARE(model.rows()[2].tracePath, slow);
    QCOMPARE(model.rowOfConfig(QString::fromStdString(
                 to_json_text(test_support::config(Layout::NHWC, "direct", 2, 2)))),
             2);
  }

  void declaredWinnerLeads() {
    // A tie within noise may crown a slower, simpler config; best.json says which.
    QTemporaryDir dir;
    const QString db = test_support::writeResultsDb(dir);
    writeTuneTrace(dir.path(), QStringLiteral("best.json"),
                   test_support::config(Layout::NCHW, "direct", 1));
    CandidatesModel model;
    QVERIFY(model.load(db, nullptr));
    QCOMPARE(model.rows()[0].label, QStringLiteral("nchw conv=direct threads=1"));
    QVERIFY(model.rows()[0].best && model.rows()[0].baseline);
    QVERIFY(model.index(0, CandidatesModel::ConfigColumn)
                .data()
                .toString()
                .endsWith(QStringLiteral("(best, baseline)")));
    QCOMPARE(model.rows()[1].label, QStringLiteral("nhwc conv=gemm threads=2"));
  }

  void baselineThatWinsNamesTheBestTrace() {
    // The baseline won: the tune writes its config to both files; its row names best.json.
    QTemporaryDir dir;
    const QString db = test_support::writeResultsDb(dir);
    const QString traces = dir.filePath(QStringLiteral("traces"));
    const QString best = writeTuneTrace(traces, QStringLiteral("best.json"),
                                        test_support::config(Layout::NCHW, "direct", 1));
    writeTuneTrace(traces, QStringLiteral("baseline.json"),
                   test_support::config(Layout::NCHW, "direct", 1));
    CandidatesModel model;
    QVERIFY(model.load(db, nullptr));
    QVERIFY(model.rows()[0].best && model.rows()[0].baseline);
    QCOMPARE(model.rows()[0].tracePath, best);
  }

  void onlyTheFirstBaselineShapedConfigIsTheBaseline() {
    // A tune over threads 1,2 measures nchw + direct twice; the yardstick is the first.
    QTemporaryDir dir;
    const QString path = test_support::writeTrials(
        dir, QStringLiteral("threads.sqlite"),
        {test_support::trial(test_support::config(Layout::NCHW, "direct", 1),
                             tuner::TrialStatus::ok, 1000),
         test_support::trial(test_support::config(Layout::NCHW, "direct", 2),
                             tuner::TrialStatus::ok, 1200)});
    CandidatesModel model;
    QVERIFY(model.load(path, nullptr));
    QCOMPARE(model.rowCount(), 2);
    QVERIFY(!model.rows()[0].baseline);
    QVERIFY(model.rows()[1].baseline);
    QCOMPARE(model.baselineRow()->label, QStringLiteral("nchw conv=direct threads=1"));
    QCOMPARE(model.ratioToBaseline(model.rows()[0]), 1.2);
  }

  void cudaBaselineIsItsDefaultConvAlgorithm_data() {
    // Rows in recorded order (a tune records its reference first); the expected
    // baseline's label, by the rule of the tuner and `report` (tuner::stored_baseline).
    QTest::addColumn<QString>("backend");
    QTest::addColumn<QStringList>("algorithms");
    QTest::addColumn<QString>("baseline");
    QTest::newRow("cuda: cuDNN's implicit GEMM, no direct")
        << "cuda" << QStringList{"cudnn:implicit_gemm", "cudnn:gemm", "fft-cufft"}
        << "nchw conv=cudnn:implicit_gemm threads=1";
    QTest::newRow("cpu: direct") << "cpu" << QStringList{"direct", "gemm", "fft-fftw"}
                                 << "nchw conv=direct threads=1";
  }
  void cudaBaselineIsItsDefaultConvAlgorithm() {
    QFETCH(QString, backend);
    QFETCH(QStringList, algorithms);
    QFETCH(QString, baseline);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("backend.sqlite"));
    {
      tuner::ResultsDb db(path.toStdString());
      const int64_t m = db.machine_id({"test GPU", 16, backend.toStdString(), "test backend"});
      const int64_t p = db.problem_id({"resnet18-small", "3x32x32", 32});
      double eps = 1000;
      for (const QString& algorithm : algorithms) {
        db.add_trial(
            p, m,
            test_support::trial(test_support::config(Layout::NCHW, algorithm.toStdString(), 1),
                                tuner::TrialStatus::ok, eps));
        eps += 250;
      }
    }
    CandidatesModel model;
    QString error;
    QVERIFY2(model.load(path, &error), qPrintable(error));
    QCOMPARE(model.rowCount(), 3);
    QVERIFY(model.baselineRow());
    QCOMPARE(model.baselineRow()->label, baseline);
    QCOMPARE(model.rows()[0].label,
             QStringLiteral("nchw conv=%1 threads=1").arg(algorithms.back()));
    QCOMPARE(model.ratioToBaseline(model.rows()[0]), 1.5);  // 1500 vs the baseline's 1000
    QCOMPARE(model.index(2, CandidatesModel::ConfigColumn).data().toString(),
             baseline + QStringLiteral("  (baseline)"));
  }

  void halvingRoundsRankAsTheTunerRanks() {
    // A halving tune: a candidate eliminated after a short first round (2 steps) may show
    // a faster median than the finalists timed 6 steps; the tuner ranks the finalists
    // first (tuner::rank_ok_trials), and so does the view.
    QTemporaryDir dir;
    auto timed = [](RunConfig c, double eps, int64_t steps) {
      tuner::TrialResult t = test_support::trial(std::move(c), tuner::TrialStatus::ok, eps);
      t.figures.steps = steps;
      return t;
    };
    const QString path = test_support::writeTrials(
        dir, QStringLiteral("halving.sqlite"),
        {timed(test_support::config(Layout::NCHW, "direct", 1), 1000, 6),
         timed(test_support::config(Layout::NHWC, "gemm", 1), 1900, 2),
         timed(test_support::config(Layout::NHWC, "direct", 1), 1200, 6)});
    CandidatesModel model;
    QVERIFY(model.load(path, nullptr));
    QCOMPARE(model.rows()[0].label, QStringLiteral("nhwc conv=direct threads=1"));
    QVERIFY(model.rows()[0].best);
    QCOMPARE(model.rows()[1].label, QStringLiteral("nchw conv=direct threads=1"));
    QCOMPARE(model.rows()[2].label, QStringLiteral("nhwc conv=gemm threads=1"));
  }

  void finalRoundsRaceOutsRankAsTheTunerRanks() {
    // A tune's final rounds: the winner and a member still racing at their end (slower),
    // and a member raced out at an earlier look that measured faster than that one; then a
    // sweep candidate that never reached the rounds. The view reads stop rules and reasons
    // from the DB and ranks as `report` does (tuner::rank_ok_trials).
    QTemporaryDir dir;
    auto member = [](RunConfig c, double eps, tuner::StopRule stop) {
      tuner::TrialResult t = test_support::trial(std::move(c), tuner::TrialStatus::ok, eps, 0,
                                                 std::string(tuner::kRemeasureReason) + " of 3");
      t.figures.stop = stop;
      return t;
    };
    tuner::TrialResult swept = test_support::trial(test_support::config(Layout::NCHW, "direct", 1),
                                                   tuner::TrialStatus::ok, 1400);
    swept.figures.stop = tuner::StopRule::converged;
    const QString path = test_support::writeTrials(
        dir, QStringLiteral("rounds.sqlite"),
        {swept,
         member(test_support::config(Layout::NHWC, "gemm", 1), 1700, tuner::StopRule::interleaved),
         member(test_support::config(Layout::NHWC, "direct", 1), 1350,
                tuner::StopRule::interleaved),
         member(test_support::config(Layout::NCHW, "gemm", 1), 1500, tuner::StopRule::raced_out)});
    CandidatesModel model;
    QVERIFY(model.load(path, nullptr));
    QCOMPARE(model.rows()[0].label, QStringLiteral("nhwc conv=gemm threads=1"));
    QCOMPARE(model.rows()[1].label, QStringLiteral("nchw conv=gemm threads=1"));
    QCOMPARE(model.rows()[2].label, QStringLiteral("nhwc conv=direct threads=1"));
    QCOMPARE(model.rows()[3].label, QStringLiteral("nchw conv=direct threads=1"));
  }

  void labelsAreUniqueAndComplete() {
    // Same knobs written by two tunescope versions (before the concurrency keys existed,
    // and now): one config, one row. A knob this GUI does not know keeps its configs
    // apart and is named in the label. Every label of a problem is then unique.
    QTemporaryDir dir;
    const RunConfig nhwc2 = test_support::config(Layout::NHWC, "direct", 2);
    std::vector<tuner::TrialResult> trials;
    for (double eps : {900.0, 1000.0, 1100.0, 1200.0})
      trials.push_back(test_support::trial(nhwc2, tuner::TrialStatus::ok, eps));
    const QString path = test_support::writeTrials(dir, QStringLiteral("versions.sqlite"), trials);
    auto setConfig = [&](int id, const char* text) {
      sqlite3* db = nullptr;
      QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
      sqlite3_stmt* stmt = nullptr;
      QCOMPARE(
          sqlite3_prepare_v2(db, "UPDATE trials SET config = ?1 WHERE id = ?2", -1, &stmt, nullptr),
          SQLITE_OK);
      sqlite3_bind_text(stmt, 1, text, -1, SQLITE_TRANSIENT);
      sqlite3_bind_int(stmt, 2, id);
      QCOMPARE(sqlite3_step(stmt), SQLITE_DONE);
      sqlite3_finalize(stmt);
      sqlite3_close(db);
    };
    // Row 1 as written before commit 5d2d63c: no concurrency keys, other key order.
    setConfig(1, R"({"schema": "tunescope.config/1", "threads": 2, "model": "lenet5", "batch": 32,
                    "layout": "nhwc", "conv": {"default": "direct"}})");
    // Rows 3 and 4: a knob from a newer tunescope, with two values.
    std::string newer = to_json_text(nhwc2);
    newer.insert(newer.rfind('}'), ", \"future_knob\": \"on\"");
    setConfig(3, newer.c_str());
    newer.replace(newer.find("\"on\""), 4, "\"off\"");
    setConfig(4, newer.c_str());

    CandidatesModel model;
    QString error;
    QVERIFY2(model.load(path, &error), qPrintable(error));
    QCOMPARE(model.rowCount(), 3);
    QStringList labels;
    for (const CandidateRow& r : model.rows()) labels << r.label;
    labels.sort();
    QCOMPARE(labels, (QStringList{QStringLiteral("nhwc conv=direct threads=2"),
                                  QStringLiteral("nhwc conv=direct threads=2 future_knob=off"),
                                  QStringLiteral("nhwc conv=direct threads=2 future_knob=on")}));
    const int merged = model.rowOfConfig(QString::fromStdString(to_json_text(nhwc2)));
    QVERIFY(merged >= 0);
    QCOMPARE(model.rows()[size_t(merged)].measurements, 2);
    QCOMPARE(model.rows()[size_t(merged)].medianEps, 1000.0);  // the latest of the two
  }

  void configLabelMatchesRunConfig_data() {
    QTest::addColumn<int>("variant");
    for (int i = 0; i < 6; ++i) QTest::newRow(qPrintable(QStringLiteral("variant %1").arg(i))) << i;
  }
  void configLabelMatchesRunConfig() {
    QFETCH(int, variant);
    RunConfig c = test_support::config(variant % 2 ? Layout::NHWC : Layout::NCHW,
                                       variant < 2 ? "gemm" : "fft", variant + 1);
    if (variant == 1) c.conv.per_layer = {{"conv1", "direct"}, {"conv2", "fft"}};
    if (variant == 2) {
      knobs::streams.set(c.knobs, 2);
      knobs::async_update.set(c.knobs, true);
      c.knobs.set_text("fft_workspace",
                       "cache");  // an algorithm's knob: unknown here, kept by its key
    }
    if (variant == 3) {
      knobs::replicas.set(c.knobs, 2);
      knobs::micro_batches.set(c.knobs, 2);
      knobs::threads_per_lane.set(c.knobs, 1);
    }
    // The FFT tiling knob (declared by the FFT algorithms, which the GUI does not link):
    // written only when set, so the label shows it as the CLI does.
    if (variant == 4) c.knobs.set_text("fft_tile", "16");
    if (variant == 5) {
      c.knobs.set_text("fft_tile", "off");
      c.knobs.set_text("fft_workspace", "cache");
    }
    QCOMPARE(configLabel(QString::fromStdString(to_json_text(c))),
             QString::fromStdString(c.label()));
    if (variant == 4) QVERIFY(c.label().find(" fft_tile=16") != std::string::npos);
    if (variant == 5)
      QVERIFY(c.label().find("fft_tile=off fft_workspace=cache") != std::string::npos);
  }

  void windowOpensDbAndTrace() {
    QTemporaryDir dir;
    const QString db = test_support::writeResultsDb(dir);
    writeTuneTrace(dir.filePath(QStringLiteral("traces")), QStringLiteral("best.json"),
                   test_support::config(Layout::NHWC, "gemm", 2));
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QSignalSpy results(&w, &MainWindow::resultsLoaded);
    w.openFile(db);
    QCOMPARE(results.count(), 1);
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::CandidatesTab));
    QCOMPARE(w.candidatesView()->table()->model()->rowCount(), 6);
    QVERIFY(!w.candidatesView()->openRow(2));  // no trace for it
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    // A click on the best bar opens its trace in the timeline.
    CandidatesChart* chart = w.candidatesView()->chart();
    int y = 0;
    while (y < chart->height() && chart->rowAt(y) != 0) ++y;
    QTest::mouseClick(chart, Qt::LeftButton, {}, QPoint(chart->width() / 2, y + 3));
    QVERIFY(loaded.wait(10'000));
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::TimelineTab));
    QVERIFY(w.document()->filePath().endsWith(QStringLiteral("best.json")));
    QVERIFY(w.recentFiles().contains(QFileInfo(db).absoluteFilePath()));
    const QImage shot = w.candidatesView()->chart()->grab().toImage();
    QVERIFY(!shot.isNull());
  }

  void windowShowsErrorNamingTheDb() {
    const QString path = dir_.filePath(QStringLiteral("bad-foreign.db"));
    QVERIFY(QFile::exists(path));  // written by notOurDb
    MainWindow w;
    w.show();
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.openFile(path);
    QCOMPARE(failed.count(), 1);
    QVERIFY(failed.first().first().toString().contains(path));
    auto* box = w.findChild<QMessageBox*>(QStringLiteral("loadErrorDialog"));
    QVERIFY(box);
    QVERIFY(box->text().contains(QStringLiteral("bad-foreign.db")));
    QCOMPARE(box->windowTitle(), QStringLiteral("Cannot open results DB"));
  }
};

QTEST_MAIN(CandidatesModelTest)
#include "tst_candidatesmodel.moc"
