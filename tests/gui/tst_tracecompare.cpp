// Compare: the per-kernel difference table equals the difference of the two traces'
// profiler::kernel_table; the alignment offset equals the difference of their first
// iteration starts; the Compare view keeps both timelines on that common scale while
// zooming and panning either one.
#include <QSignalSpy>
#include <QTableView>
#include <QtTest>
#include <map>

#include "GuiTestTraces.h"
#include "models/TraceCompare.h"
#include "models/TraceDocument.h"
#include "profiler/Metrics.h"
#include "widgets/CompareView.h"
#include "widgets/TimelineView.h"

using namespace tunescope;
using namespace tunescope::gui;

Q_DECLARE_METATYPE(profiler::Trace)

namespace {
profiler::Trace shifted(profiler::Trace t, int64_t by) {
  for (auto& a : t.activities) a.start_ns += by, a.end_ns += by;
  for (auto& r : t.ranges) r.start_ns += by, r.end_ns += by;
  return t;
}

// The "tuned" variant of smallTrace: direct.fwd replaced by a faster gemm.fwd, bn.fwd
// slower, an extra memcpy of the same name as a kernel, sgd unchanged.
profiler::Trace tunedTrace() {
  profiler::Trace t = test_support::smallTrace();
  for (auto& a : t.activities) {
    if (a.name == "direct.fwd") {
      a.name = "gemm.fwd";
      a.end_ns = a.start_ns + 400;
    } else if (a.name == "bn.fwd") {
      a.end_ns = a.start_ns + 30;
    }
  }
  auto copy = test_support::kernel("sgd", 0, 0, 1'000'000 + 1700, 1'000'000 + 1750);
  copy.kind = profiler::ActivityKind::memcpy;
  t.activities.push_back(copy);
  profiler::sort_by_start(t);
  return t;
}

profiler::Trace withoutIterations(profiler::Trace t) {
  std::erase_if(t.ranges, [](const profiler::Range& r) {
    return r.category == profiler::RangeCategory::iteration;
  });
  return t;
}
}  // namespace

class TraceCompareTest : public QObject {
  Q_OBJECT
 private slots:
  void diffIsTheDifferenceOfKernelTables_data() {
    QTest::addColumn<profiler::Trace>("a");
    QTest::addColumn<profiler::Trace>("b");
    QTest::newRow("identical") << test_support::smallTrace() << test_support::smallTrace();
    QTest::newRow("default vs tuned") << test_support::smallTrace() << tunedTrace();
    QTest::newRow("tuned vs default") << tunedTrace() << test_support::smallTrace();
    QTest::newRow("shifted clock")
        << test_support::smallTrace() << shifted(tunedTrace(), 5'000'000'000);
    QTest::newRow("empty A") << profiler::Trace{} << test_support::smallTrace();
  }
  void diffIsTheDifferenceOfKernelTables() {
    QFETCH(profiler::Trace, a);
    QFETCH(profiler::Trace, b);
    const auto ta = profiler::kernel_table(a), tb = profiler::kernel_table(b);
    const std::vector<KernelDiffRow> diff = kernelDiff(ta, tb);
    using Key = std::pair<int, std::string>;
    std::map<Key, const profiler::KernelStats*> ma, mb;
    for (const auto& k : ta) ma[{int(k.kind), k.name}] = &k;
    for (const auto& k : tb) mb[{int(k.kind), k.name}] = &k;
    std::map<Key, bool> keys;
    for (const auto& [k, v] : ma) keys[k] = true;
    for (const auto& [k, v] : mb) keys[k] = true;
    QCOMPARE(diff.size(), keys.size());
    int64_t previous = std::numeric_limits<int64_t>::max();
    for (const KernelDiffRow& r : diff) {
      const Key key{int(r.kind), r.name};
      const auto* ka = ma.count(key) ? ma[key] : nullptr;
      const auto* kb = mb.count(key) ? mb[key] : nullptr;
      QVERIFY(ka || kb);
      QCOMPARE(r.callsA, ka ? ka->calls : size_t(0));
      QCOMPARE(r.callsB, kb ? kb->calls : size_t(0));
      QCOMPARE(r.totalA, ka ? ka->total_ns : int64_t(0));
      QCOMPARE(r.totalB, kb ? kb->total_ns : int64_t(0));
      QCOMPARE(r.delta(), r.totalB - r.totalA);
      if (ka && ka->total_ns > 0) QCOMPARE(r.ratio(), double(r.totalB) / double(r.totalA));
      QVERIFY(std::llabs(r.delta()) <= previous);  // largest change first
      previous = std::llabs(r.delta());
    }
  }

  void knownNumbers() {
    const auto diff = kernelDiff(profiler::kernel_table(test_support::smallTrace()),
                                 profiler::kernel_table(tunedTrace()));
    KernelDiffModel model;
    model.setNames(QStringLiteral("default"), QStringLiteral("tuned"));
    model.setRows(diff);
    // direct.fwd: 3 x 1000 ns gone; gemm.fwd: 3 x 400 ns new.
    QCOMPARE(QString::fromStdString(diff[0].name), QStringLiteral("direct.fwd"));
    QCOMPARE(diff[0].delta(), int64_t(-3000));
    QCOMPARE(model.index(0, KernelDiffModel::RatioColumn).data().toString(),
             QStringLiteral("gone"));
    QCOMPARE(QString::fromStdString(diff[1].name), QStringLiteral("gemm.fwd"));
    QCOMPARE(diff[1].totalB, int64_t(1200));
    QCOMPARE(model.index(1, KernelDiffModel::RatioColumn).data().toString(), QStringLiteral("new"));
    QCOMPARE(
        model.headerData(KernelDiffModel::CallsBColumn, Qt::Horizontal, Qt::DisplayRole).toString(),
        QStringLiteral("Calls tuned"));
    int bn = -1;
    for (int i = 0; i < model.rowCount(); ++i)
      if (model.index(i, 0).data().toString() == QLatin1String("bn.fwd")) bn = i;
    QVERIFY(bn >= 0);
    QCOMPARE(
        model.index(bn, KernelDiffModel::DeltaColumn).data(KernelDiffModel::SortRole).toLongLong(),
        2 * (30 - 9));
    // sgd as a kernel (unchanged) and as a memcpy (new) are two rows.
    int sgdRows = 0;
    for (const auto& r : diff) sgdRows += r.name == "sgd";
    QCOMPARE(sgdRows, 2);
  }

  void alignmentOffset_data() {
    QTest::addColumn<profiler::Trace>("a");
    QTest::addColumn<profiler::Trace>("b");
    QTest::addColumn<qint64>("startA");
    QTest::addColumn<qint64>("startB");
    const qint64 o = 1'000'000;
    QTest::newRow("same trace") << test_support::smallTrace() << test_support::smallTrace() << o
                                << o;
    QTest::newRow("B later clock") << test_support::smallTrace()
                                   << shifted(test_support::smallTrace(), 7'500) << o << o + 7'500;
    QTest::newRow("B earlier clock")
        << test_support::smallTrace() << shifted(test_support::smallTrace(), -400'000) << o
        << o - 400'000;
    profiler::Trace warm = test_support::smallTrace();
    // A warm-up phase before the first iteration: alignment skips it.
    warm.activities.push_back(test_support::kernel("warmup", 0, 0, o - 900, o - 100));
    warm.ranges.push_back(
        test_support::range("warmup", profiler::RangeCategory::phase, o - 900, o - 100));
    profiler::sort_by_start(warm);
    QTest::newRow("A has a warm-up before its first iteration")
        << warm << shifted(test_support::smallTrace(), 123) << o << o + 123;
    QTest::newRow("no iteration ranges: first start")
        << withoutIterations(shifted(warm, 50)) << test_support::smallTrace() << o - 850 << o;
  }
  void alignmentOffset() {
    QFETCH(profiler::Trace, a);
    QFETCH(profiler::Trace, b);
    QFETCH(qint64, startA);
    QFETCH(qint64, startB);
    QCOMPARE(qint64(firstIterationStart(a)), startA);
    QCOMPARE(qint64(firstIterationStart(b)), startB);
    QCOMPARE(qint64(tunescope::gui::alignmentOffset(a, b)), startB - startA);
  }

  void viewSharesZoomAndPan() {
    const qint64 shift = 2'000'000'000;
    auto a = std::make_shared<const TraceDocument>(test_support::smallTrace(),
                                                   QStringLiteral("baseline.json"));
    auto b = std::make_shared<const TraceDocument>(shifted(tunedTrace(), shift),
                                                   QStringLiteral("best.json"));
    CompareView view;
    view.resize(1200, 900);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setDocuments(a, b);
    QCOMPARE(view.offset(), shift);
    QCOMPARE(view.diffModel()->rowCount(),
             int(kernelDiff(a->kernelTable(), b->kernelTable()).size()));
    auto aligned = [&] {
      const TimelineData& ta = view.viewA()->timeline();
      const TimelineData& tb = view.viewB()->timeline();
      return ta.viewStartNs + double(shift) == tb.viewStartNs &&
             ta.viewEndNs + double(shift) == tb.viewEndNs &&
             ta.boundsStartNs + shift == tb.boundsStartNs &&
             ta.boundsEndNs + shift == tb.boundsEndNs;
    };
    QVERIFY(aligned());
    view.viewA()->setFocus();
    QTest::keyClick(view.viewA(), Qt::Key_W);  // zoom in A
    QVERIFY(view.viewA()->timeline().span() < 3600);
    QVERIFY(aligned());
    QTest::keyClick(view.viewB(), Qt::Key_D);  // pan B
    QVERIFY(aligned());
    QTest::keyClick(view.viewB(), Qt::Key_S);
    QTest::keyClick(view.viewA(), Qt::Key_A);
    QVERIFY(aligned());
    view.viewB()->fitAll();
    QVERIFY(aligned());
  }
};

QTEST_MAIN(TraceCompareTest)
#include "tst_tracecompare.moc"
