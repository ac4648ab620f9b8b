// Selection statistics are profiler::summarize's answer for the selected window
// (kernel table, busy per lane, concurrency), whatever the drag direction.
#include <QtTest>

#include "GuiTestTraces.h"
#include "models/SelectionStats.h"
#include "profiler/Metrics.h"

using namespace tunescope;
using namespace tunescope::gui;

namespace {
profiler::TraceSummary reference(const profiler::Trace& trace, profiler::Interval window) {
  profiler::SummaryOptions options;
  options.scope.window = window;
  return profiler::summarize(trace, options);
}
}  // namespace

class SelectionStatsTest : public QObject {
  Q_OBJECT
 private slots:
  void equalsSummarize_data() {
    QTest::addColumn<qint64>("from");
    QTest::addColumn<qint64>("to");
    const qint64 o = 1'000'000;
    QTest::newRow("whole trace") << o << o + 3600;
    QTest::newRow("overlap of two streams, clipped") << o + 400 << o + 1200;
    QTest::newRow("device 1 only") << o + 3150 << o + 3600;
    QTest::newRow("reversed drag") << o + 1200 << o + 400;
    QTest::newRow("empty gap") << o + 1700 << o + 1900;
  }
  void equalsSummarize() {
    QFETCH(qint64, from);
    QFETCH(qint64, to);
    const profiler::Trace trace = test_support::smallTrace();
    const SelectionStats stats = computeSelectionStats(trace, {from, to});
    const profiler::Interval window{std::min(from, to), std::max(from, to)};
    QCOMPARE(stats.window, window);
    const profiler::TraceSummary expected = reference(trace, window);
    const profiler::TraceSummary& got = stats.summary;
    QCOMPARE(got.span, expected.span);
    QCOMPARE(got.activities, expected.activities);
    QCOMPARE(got.kernels.size(), expected.kernels.size());
    for (size_t i = 0; i < got.kernels.size(); ++i) {
      QCOMPARE(got.kernels[i].name, expected.kernels[i].name);
      QCOMPARE(got.kernels[i].calls, expected.kernels[i].calls);
      QCOMPARE(got.kernels[i].total_ns, expected.kernels[i].total_ns);
      QCOMPARE(got.kernels[i].share_pct, expected.kernels[i].share_pct);
    }
    QCOMPARE(got.lanes.size(), expected.lanes.size());
    for (size_t i = 0; i < got.lanes.size(); ++i) {
      QCOMPARE(got.lanes[i].lane, expected.lanes[i].lane);
      QCOMPARE(got.lanes[i].busy_ns, expected.lanes[i].busy_ns);
    }
    QCOMPARE(got.concurrency.busy_ns, expected.concurrency.busy_ns);
    QCOMPARE(got.concurrency.concurrent_ns, expected.concurrency.concurrent_ns);
    QCOMPARE(got.concurrency.mean_in_flight, expected.concurrency.mean_in_flight);
  }

  void knownNumbersForTheOverlap() {
    // [400, 1200): stream 0 runs direct.fwd [0,1000) and bn.fwd [1100,1109); stream 1
    // runs direct.fwd [500,1500): clipped busy 600+9 and 700; overlap 500+9.
    const qint64 o = 1'000'000;
    const SelectionStats stats =
        computeSelectionStats(test_support::smallTrace(), {o + 400, o + 1200});
    QCOMPARE(stats.summary.lanes.size(), size_t(2));
    QCOMPARE(stats.summary.lanes[0].busy_ns, int64_t(609));
    QCOMPARE(stats.summary.lanes[1].busy_ns, int64_t(700));
    QCOMPARE(stats.summary.concurrency.concurrent_ns, int64_t(509));
    QCOMPARE(stats.summary.kernels.front().name, std::string("direct.fwd"));
    QCOMPARE(stats.summary.kernels.front().calls, size_t(2));
  }

  void htmlShowsTheNumbers() {
    const qint64 o = 1'000'000;
    const SelectionStats stats =
        computeSelectionStats(test_support::smallTrace(), {o + 400, o + 1200});
    const QString html = selectionStatsHtml(stats, o, QStringLiteral("Selection"));
    QVERIFY(html.contains(QStringLiteral("Selection")));
    QVERIFY(html.contains(QStringLiteral("800 ns")));  // duration
    QVERIFY(html.contains(QStringLiteral("direct.fwd")));
    QVERIFY(html.contains(QStringLiteral("dev 0 · lane 1")));
  }
};

QTEST_APPLESS_MAIN(SelectionStatsTest)
#include "tst_selectionstats.moc"
