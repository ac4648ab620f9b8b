// Tracks of the timeline, offscreen: the streams-2 async trace of the issue (made by the
// real CLI) at 1600x1000 shows both kernel lanes and their nested ranges in the first
// screen; ranges nest under the lane they ran on; labels are never elided without a
// tooltip naming them in full; a device group collapses (hiding its tracks), expands,
// and is remembered per trace kind; eight lanes with four range levels each still fit;
// a selected kernel's launch and range flows are drawn from and to the right rows.
#include <QProcess>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "GuiTestTraces.h"
#include "widgets/MainWindow.h"
#include "widgets/TimelineView.h"

using namespace tunescope;
using namespace tunescope::gui;

class TimelineTracksTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString streamsTrace_;

  std::unique_ptr<MainWindow> openWindow(const QString& path) {
    auto w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    QSignalSpy loaded(w.get(), &MainWindow::documentLoaded);
    w->openFile(path);
    if (!loaded.wait(20'000)) qFatal("trace did not load");
    return w;
  }

  // The rows' viewport of a view: between the ruler and the legend, the first screen
  // when the scroll bar is at the top.
  static QRect firstScreen(const TimelineView& view) {
    return QRect(0, TimelineView::kRulerHeight, view.width(),
                 view.height() - TimelineView::kRulerHeight - TimelineView::kLegendHeight);
  }

  static void clearRemembered() {
    QSettings settings;
    settings.remove(QStringLiteral("timeline"));
  }

  // Every label either fits or says what it holds in a tooltip.
  static void checkLabels(const TimelineView& view, int* elided) {
    for (const HeaderLabel& label : view.headerLabels()) {
      QVERIFY(!label.full.isEmpty());
      if (!label.elided()) continue;
      ++*elided;
      QVERIFY2(label.shown.contains(QChar(0x2026)), qPrintable(label.shown));
      QVERIFY2(!label.shown.endsWith(QChar(0x2026)), "elided in the middle, not cut at the end");
      const QString tip = view.toolTipAt(label.rect.center());
      QVERIFY2(tip.contains(label.full.toHtmlEscaped()), qPrintable(label.full + " -> " + tip));
    }
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings go to a test location
    QCoreApplication::setOrganizationName(QStringLiteral("tunescope-test"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_timelinetracks"));
    clearRemembered();
    // The command: ResNet-18-small, two streams, asynchronous update.
    streamsTrace_ = dir_.filePath(QStringLiteral("a.json"));
    QProcess cli;
    cli.start(QStringLiteral(TUNESCOPE_CLI_PATH),
              {"profile", "--model", "resnet18-small", "--data", "fake", "--batch", "32", "--steps",
               "4", "--streams", "2", "--async-update", "--trace", streamsTrace_});
    QVERIFY(cli.waitForFinished(120'000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
  }

  void init() { clearRemembered(); }

  void streamsTraceShowsBothLanesAndTheirRangesInTheFirstScreen() {
    auto w = openWindow(streamsTrace_);
    const TraceDocument& doc = *w->document();
    const TimelineView& view = *w->timelineView();
    QCOMPARE(doc.lanes().size(), size_t(2));
    QCOMPARE(doc.trackGroups().size(), size_t(1));
    QCOMPARE(doc.tracks().size(), size_t(2));
    QCOMPARE(view.verticalScrollBar()->value(), 0);
    const QRect screen = firstScreen(view);
    for (int t = 0; t < 2; ++t) {
      const Track& track = doc.tracks()[size_t(t)];
      QCOMPARE(track.key, (profiler::LaneKey{0, t}));
      const QRect lane = view.activityLaneRect(t);
      QVERIFY2(screen.contains(lane),
               qPrintable(QStringLiteral("lane %1 at y %2..%3 outside %4..%5")
                              .arg(t)
                              .arg(lane.top())
                              .arg(lane.bottom())
                              .arg(screen.top())
                              .arg(screen.bottom())));
      QVERIFY(lane.height() >= 20);
      QVERIFY(!track.rangeRows.empty());
      for (int depth = 0; depth < int(track.rangeRows.size()); ++depth) {
        const QRect row = view.rangeRowRect(t, depth);
        QVERIFY(screen.contains(row));
        QVERIFY(row.bottom() < lane.top());  // the stack sits above its kernels
        if (depth > 0) QVERIFY(row.top() > view.rangeRowRect(t, depth - 1).top());
      }
    }
    // Lane 0 holds the run > step > forward/backward > layer stack.
    QVERIFY(doc.tracks()[0].rangeRows.size() >= 4);
    QCOMPARE(view.activityLaneRect(0).left(), view.headerWidth());
  }

  void rangesNestUnderTheLaneTheyRanOn() {
    auto w = openWindow(streamsTrace_);
    const TraceDocument& doc = *w->document();
    const auto& ranges = doc.trace().ranges;
    size_t onLaneOne = 0;
    for (uint32_t i = 0; i < ranges.size(); ++i) {
      const RangeRow& row = doc.rangeRows()[doc.rangeRowOf(i)];
      QCOMPARE(row.lane, ranges[i].lane);
      QCOMPARE(row.device, ranges[i].device);
      onLaneOne += ranges[i].lane == 1;
      // Depth d > 0: an enclosing range on the same lane at depth d - 1.
      if (row.depth == 0) continue;
      bool enclosed = false;
      for (uint32_t j = 0; j < ranges.size() && !enclosed; ++j) {
        const RangeRow& outer = doc.rangeRows()[doc.rangeRowOf(j)];
        enclosed = outer.lane == row.lane && outer.depth == row.depth - 1 &&
                   ranges[j].start_ns <= ranges[i].start_ns &&
                   ranges[j].end_ns > ranges[i].start_ns;
      }
      QVERIFY(enclosed);
    }
    QVERIFY(onLaneOne > 0);  // the asynchronous update's ranges run on lane 1
  }

  void labelsAreNeverElidedWithoutATooltip() {
    auto w = openWindow(streamsTrace_);
    TimelineView& view = *w->timelineView();
    int elided = 0;
    checkLabels(view, &elided);
    QCOMPARE(elided, 0);  // the default column is wide enough for these labels
    // A narrow column elides them, in the middle, and the tooltip says them in full.
    view.setHeaderWidth(TimelineView::kMinHeaderWidth);
    QCOMPARE(view.headerWidth(), int(TimelineView::kMinHeaderWidth));
    checkLabels(view, &elided);
    QVERIFY(elided >= 2);
    // Dragging the column's edge resizes it.
    const int y = view.activityLaneRect(0).center().y();
    QTest::mousePress(&view, Qt::LeftButton, {}, QPoint(view.headerWidth(), y));
    QTest::mouseMove(&view, QPoint(260, y));
    QTest::mouseRelease(&view, Qt::LeftButton, {}, QPoint(260, y));
    QCOMPARE(view.headerWidth(), 260);
    QCOMPARE(view.timeline().width, view.width() - 260);
  }

  void collapsingAGroupHidesItsTracksAndIsRemembered() {
    auto w = openWindow(streamsTrace_);
    TimelineView& view = *w->timelineView();
    QVERIFY(!view.isGroupCollapsed(0));
    const QRect header = view.groupHeaderRect(0);
    QVERIFY(!header.isEmpty());
    QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(20, header.center().y()));
    QVERIFY(view.isGroupCollapsed(0));
    for (int t = 0; t < 2; ++t) {
      QVERIFY(view.trackRect(t).isEmpty());
      QVERIFY(view.activityLaneRect(t).isEmpty());
    }
    QCOMPARE(view.shownRowCount(), 1);
    QCOMPARE(view.groupHeaderRect(0), header);

    // Another trace of the same kind opens with the group collapsed...
    auto again = openWindow(streamsTrace_);
    QVERIFY(again->timelineView()->isGroupCollapsed(0));
    QVERIFY(again->timelineView()->trackRect(0).isEmpty());
    // ...a trace of another kind does not.
    QTemporaryDir other;
    profiler::Trace cuda = test_support::smallTrace();
    cuda.metadata.backend = "cuda";
    auto foreign = openWindow(test_support::writeTrace(other, cuda));
    QVERIFY(!foreign->timelineView()->isGroupCollapsed(0));

    // Expanding brings the tracks back where they were, and is remembered too.
    QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(20, header.center().y()));
    QVERIFY(!view.isGroupCollapsed(0));
    QVERIFY(firstScreen(view).contains(view.activityLaneRect(1)));
    auto third = openWindow(streamsTrace_);
    QVERIFY(!third->timelineView()->isGroupCollapsed(0));
  }

  void eightLanesWithDeepRangesFitTheFirstScreen() {
    constexpr int kLanes = 8;
    profiler::Trace trace = test_support::manyEventsTrace(8000, kLanes);
    // Three more levels per lane: steps > phases > layers, as a training step nests.
    const int64_t end = trace.ranges.front().end_ns;
    for (int lane = 0; lane < kLanes; ++lane)
      for (int64_t step = 0; step < 4; ++step) {
        const int64_t s0 = step * end / 4, s1 = (step + 1) * end / 4;
        auto add = [&](const char* name, profiler::RangeCategory c, int64_t a, int64_t b) {
          profiler::Range r = test_support::range(name, c, a, b);
          r.lane = lane;
          trace.ranges.push_back(r);
        };
        add("step", profiler::RangeCategory::iteration, s0, s1);
        add("forward", profiler::RangeCategory::phase, s0, (s0 + s1) / 2);
        add("conv1", profiler::RangeCategory::layer, s0, (3 * s0 + s1) / 4);
      }
    profiler::sort_by_start(trace);
    QTemporaryDir dir;
    auto w = openWindow(test_support::writeTrace(dir, trace, QStringLiteral("eight.json")));
    const TimelineView& view = *w->timelineView();
    QCOMPARE(int(w->document()->tracks().size()), kLanes);
    const QRect screen = firstScreen(view);
    for (int t = 0; t < kLanes; ++t) {
      QCOMPARE(int(w->document()->tracks()[size_t(t)].rangeRows.size()), 4);
      QVERIFY2(screen.contains(view.activityLaneRect(t)),
               qPrintable(QStringLiteral("lane %1").arg(t)));
      QVERIFY(view.activityLaneRect(t).height() >= 20);
      QVERIFY(screen.contains(view.rangeRowRect(t, 3)));
    }
  }

  void selectedKernelShowsItsFlows() {
    // A CUDA-like trace: a launch on the host thread's lane and the kernel it launched
    // on stream 7 share correlation 42; the kernel ran inside range 5 of the host lane.
    profiler::Trace t;
    t.metadata.backend = "cuda";
    profiler::Range step =
        test_support::range("step", profiler::RangeCategory::iteration, 0, 10'000);
    step.id = 5;
    t.ranges = {step};
    profiler::Activity launch = test_support::kernel("cudaLaunchKernel", 0, 0, 1'000, 1'500);
    launch.kind = profiler::ActivityKind::overhead;
    launch.correlation = 42;
    profiler::Activity k = test_support::kernel("conv.fwd", 0, 7, 3'000, 6'000);
    k.correlation = 42;
    k.range_id = 5;
    profiler::Activity other = test_support::kernel("bn.fwd", 0, 7, 7'000, 8'000);
    t.activities = {launch, k, other};
    profiler::sort_by_start(t);
    QTemporaryDir dir;
    auto w = openWindow(test_support::writeTrace(dir, t, QStringLiteral("flows.json")));
    TimelineView& view = *w->timelineView();
    const TraceDocument& doc = *w->document();
    QCOMPARE(doc.launchFlows().size(), size_t(1));
    QCOMPARE(doc.tracks().size(), size_t(2));  // the host thread (range + launch), stream 7
    const uint32_t kernelIndex = doc.launchFlows()[0].kernel;
    QCOMPARE(doc.trace().activities[kernelIndex].name, std::string("conv.fwd"));

    // Clicking the kernel selects it; its arrows: launch -> kernel, range -> kernel.
    const QRect kernelLane = view.activityLaneRect(1);
    const double kernelX = view.headerWidth() + view.timeline().mapTimeToX(4'500);
    QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(int(kernelX), kernelLane.center().y()));
    QCOMPARE(view.selectedActivity(), std::optional<uint32_t>(kernelIndex));
    const std::vector<QLineF> lines = view.flowLines();
    QCOMPARE(lines.size(), size_t(2));
    const QRect hostLane = view.activityLaneRect(0);
    // Each arrow runs from the start of its source to the start of the kernel.
    const auto xOf = [&](double ns) { return view.headerWidth() + view.timeline().mapTimeToX(ns); };
    QVERIFY(hostLane.contains(lines[0].p1().toPoint()));
    QVERIFY(qAbs(lines[0].p1().x() - xOf(1'000)) < 0.5);
    QVERIFY(kernelLane.contains(lines[0].p2().toPoint()));
    QVERIFY(qAbs(lines[0].p2().x() - xOf(3'000)) < 0.5);
    QVERIFY(qAbs(lines[1].p1().y() - view.rangeRowRect(0, 0).bottom()) <= 1);
    QVERIFY(kernelLane.contains(lines[1].p2().toPoint()));

    // The launch shows its one arrow; a kernel without flows none; a click on nothing clears.
    view.selectActivity(doc.launchFlows()[0].launch);
    QCOMPARE(view.flowLines().size(), size_t(1));
    const double otherX = view.headerWidth() + view.timeline().mapTimeToX(7'500);
    QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(int(otherX), kernelLane.center().y()));
    QVERIFY(view.selectedActivity());
    QVERIFY(view.flowLines().empty());
    QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(int(xOf(9'700)), kernelLane.center().y()));
    QVERIFY(!view.selectedActivity());

    // Collapsed, the arrows end on the group header instead of vanishing.
    view.selectActivity(kernelIndex);
    view.setGroupCollapsed(0, true);
    const std::vector<QLineF> collapsed = view.flowLines();
    QCOMPARE(collapsed.size(), size_t(2));
    QCOMPARE(collapsed[0].p2().y(), double(view.groupHeaderRect(0).center().y()));
  }
};

QTEST_MAIN(TimelineTracksTest)
#include "tst_timelinetracks.moc"
