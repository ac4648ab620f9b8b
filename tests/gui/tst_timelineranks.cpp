// A merged trace of two ranks in the timeline, offscreen: two real lenet5 profiles made
// into rank traces (their metadata set as an MPI run's ranks write it), merged by the
// real `tunescope merge-traces`, then opened: each rank is a group above its device
// groups, both ranks' kernel lanes are in the first screen, and collapsing a rank hides
// its tracks (and its device groups) only, and is remembered.
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "profiler/ChromeTraceWriter.h"
#include "profiler/RankMerge.h"
#include "profiler/TraceFiles.h"
#include "widgets/MainWindow.h"
#include "widgets/TimelineView.h"

using namespace tunescope;
using namespace tunescope::gui;

class TimelineRanksTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString merged_;

  static bool runCli(const QStringList& arguments, QByteArray* output = nullptr) {
    QProcess cli;
    cli.start(QStringLiteral(TUNESCOPE_CLI_PATH), arguments);
    if (!cli.waitForFinished(120'000)) return false;
    if (output) *output = cli.readAllStandardOutput();
    if (cli.exitCode() != 0) qWarning("%s", cli.readAllStandardError().constData());
    return cli.exitCode() == 0;
  }

  std::unique_ptr<MainWindow> openWindow(const QString& path) {
    auto w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    QSignalSpy loaded(w.get(), &MainWindow::documentLoaded);
    w->openFile(path);
    if (!loaded.wait(20'000)) qFatal("trace did not load");
    return w;
  }

  static QRect firstScreen(const TimelineView& view) {
    return QRect(0, TimelineView::kRulerHeight, view.width(),
                 view.height() - TimelineView::kRulerHeight - TimelineView::kLegendHeight);
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("tunescope-test"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_timelineranks"));
    QSettings().remove(QStringLiteral("timeline"));
    // Two runs one after the other stand in for two ranks: rank 1's "clock offset" is
    // the distance between their starts, as a ping-pong would measure for simultaneous
    // ranks whose clocks differ by that much.
    QStringList inputs;
    int64_t rankZeroStart = 0;
    for (int rank : {0, 1}) {
      const QString own = dir_.filePath(QStringLiteral("own%1.json").arg(rank));
      QVERIFY(runCli({"profile", "--model", "lenet5", "--data", "fake", "--batch", "16",
                      "--fake-count", "64", "--steps", "2", "--warmup", "1", "--trace", own}));
      profiler::Trace trace = profiler::read_trace_file(own.toStdString());
      QVERIFY(!trace.activities.empty());
      const int64_t start = trace.activities.front().start_ns;
      if (rank == 0) rankZeroStart = start;
      auto& extra = trace.metadata.extra;
      // GCC 12 at -O3 warns -Wrestrict inside libstdc++'s std::string assignment of these
      // short literals: a false positive (GCC bug 105329, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
      extra[profiler::kRankKey] = std::to_string(rank);
      extra[profiler::kWorldSizeKey] = "2";
      extra[profiler::kClockOffsetKey] = std::to_string(start - rankZeroStart);
      if (rank == 1) extra[profiler::kClockUncertaintyKey] = "2000";
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
      const auto path = profiler::rank_trace_path(dir_.filePath("t.json").toStdString(), rank);
      profiler::ChromeTraceWriter().write(trace, path);
      inputs << QString::fromStdString(path.string());
    }
    merged_ = dir_.filePath(QStringLiteral("merged.json"));
    QByteArray output;
    QVERIFY(runCli(QStringList{"merge-traces", merged_} + inputs, &output));
    QVERIFY2(output.contains("rank 1: +"), output.constData());
  }

  void init() { QSettings().remove(QStringLiteral("timeline")); }

  void eachRankIsAGroupAboveItsDevicesWithBothRanksOnTheFirstScreen() {
    auto w = openWindow(merged_);
    const TraceDocument& doc = *w->document();
    const TimelineView& view = *w->timelineView();
    QVERIFY(doc.ranked());
    // rank 0, its CPU, rank 1, its CPU.
    const auto& groups = doc.trackGroups();
    QCOMPARE(groups.size(), size_t(4));
    for (int rank : {0, 1}) {
      const TrackGroup& rankGroup = groups[size_t(2 * rank)];
      const TrackGroup& device = groups[size_t(2 * rank + 1)];
      QCOMPARE(rankGroup.label, QStringLiteral("rank %1").arg(rank));
      QVERIFY(!rankGroup.device.has_value());
      QCOMPARE(device.device, std::optional<int>(0));
      QCOMPARE(device.parent, std::optional<size_t>(size_t(2 * rank)));
      QCOMPARE(device.tracks, rankGroup.tracks);
      QVERIFY(!rankGroup.tracks.empty());
      for (size_t t : rankGroup.tracks) QCOMPARE(doc.tracks()[t].key.rank, rank);
      QVERIFY(firstScreen(view).contains(view.groupHeaderRect(2 * rank)));
      QVERIFY(view.groupHeaderRect(2 * rank + 1).top() > view.groupHeaderRect(2 * rank).top());
    }
    // Every kernel lane of both ranks is in the first screen.
    int kernelLanes = 0;
    for (size_t t = 0; t < doc.tracks().size(); ++t) {
      if (!doc.tracks()[t].activityLane) continue;
      ++kernelLanes;
      QVERIFY(firstScreen(view).contains(view.activityLaneRect(int(t))));
    }
    QVERIFY(kernelLanes >= 2);
    // The straggler and clock lines reach the document's summary.
    QCOMPARE(doc.summary().ranks.ranks.size(), size_t(2));
    QCOMPARE(doc.summary().rank_clocks.size(), size_t(2));
  }

  void collapsingARankHidesOnlyItsTracksAndIsRemembered() {
    auto w = openWindow(merged_);
    TimelineView& view = *w->timelineView();
    const TraceDocument& doc = *w->document();
    const auto& rankZero = doc.trackGroups()[0].tracks;
    const auto& rankOne = doc.trackGroups()[2].tracks;
    const QRect header = view.groupHeaderRect(0);
    QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(20, header.center().y()));
    QVERIFY(view.isGroupCollapsed(0));
    for (size_t t : rankZero) QVERIFY(view.trackRect(int(t)).isEmpty());
    QVERIFY(view.groupHeaderRect(1).isEmpty());  // its device's header goes with it
    for (size_t t : rankOne) QVERIFY(!view.trackRect(int(t)).isEmpty());

    auto again = openWindow(merged_);
    QVERIFY(again->timelineView()->isGroupCollapsed(0));
    QVERIFY(!again->timelineView()->isGroupCollapsed(2));
    again->timelineView()->setGroupCollapsed(0, false);
    for (size_t t : rankZero) QVERIFY(!again->timelineView()->trackRect(int(t)).isEmpty());
  }
};

QTEST_MAIN(TimelineRanksTest)
#include "tst_timelineranks.moc"
