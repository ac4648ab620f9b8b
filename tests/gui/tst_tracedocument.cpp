// Loading a trace written by ChromeTraceWriter fills TraceDocument lanes, range rows
// and the kernel table model with the right counts; the table sorts numerically and
// filters by name; kernel names classify into the families the timeline colours.
#include <QTemporaryDir>
#include <QtTest>

#include "GuiTestTraces.h"
#include "models/KernelKind.h"
#include "models/KernelTableModel.h"
#include "models/TraceDocument.h"

using namespace tunescope;
using namespace tunescope::gui;

class TraceDocumentTest : public QObject {
  Q_OBJECT
 private slots:
  void lanesAndRangeRows() {
    QTemporaryDir dir;
    const auto doc = TraceDocument::load(test_support::writeTrace(dir, test_support::smallTrace()));
    QCOMPARE(doc->trace().activities.size(), size_t(8));
    QCOMPARE(doc->lanes().size(), size_t(3));
    const auto& lanes = doc->lanes();
    QCOMPARE(lanes[0].key, (profiler::LaneKey{0, 0}));
    QCOMPARE(lanes[0].series.size(), size_t(4));
    QCOMPARE(lanes[1].key, (profiler::LaneKey{0, 1}));
    QCOMPARE(lanes[1].series.size(), size_t(2));
    QCOMPARE(lanes[2].key, (profiler::LaneKey{1, 0}));
    QCOMPARE(lanes[2].series.size(), size_t(2));
    QCOMPARE(lanes[0].series.maxDurationNs, int64_t(1000));
    QVERIFY(std::is_sorted(lanes[0].series.starts.begin(), lanes[0].series.starts.end()));
    QCOMPARE(lanes[0].label, QStringLiteral("CPU 0 · lane 0"));

    // run (depth 0) > two iterations (depth 1) > one layer (depth 2)
    const auto& rows = doc->rangeRows();
    QCOMPARE(rows.size(), size_t(3));
    QCOMPARE(rows[0].depth, 0);
    QCOMPARE(rows[0].label, QStringLiteral("run"));
    QCOMPARE(rows[1].series.size(), size_t(2));
    QCOMPARE(rows[1].label, QStringLiteral("iteration"));
    QCOMPARE(rows[2].label, QStringLiteral("layer"));

    // Tracks: each lane's range stack above its activities, grouped by device.
    const auto& tracks = doc->tracks();
    QCOMPARE(tracks.size(), size_t(3));
    QCOMPARE(tracks[0].key, (profiler::LaneKey{0, 0}));
    QCOMPARE(tracks[0].rangeRows, (std::vector<size_t>{0, 1, 2}));
    QCOMPARE(tracks[0].activityLane, std::optional<size_t>(0));
    QVERIFY(tracks[1].rangeRows.empty());
    QCOMPARE(tracks[2].activityLane, std::optional<size_t>(2));
    const auto& groups = doc->trackGroups();
    QCOMPARE(groups.size(), size_t(2));
    QCOMPARE(groups[0].label, QStringLiteral("CPU"));  // the profiler's device name, as in Perfetto
    QCOMPARE(groups[0].tracks, (std::vector<size_t>{0, 1}));
    QCOMPARE(groups[1].tracks, (std::vector<size_t>{2}));
    QCOMPARE(doc->kind(), QStringLiteral("cpu"));
    QVERIFY(doc->launchFlows().empty());

    QCOMPARE(doc->extent().start_ns, int64_t(1'000'000));
    QCOMPARE(doc->extent().end_ns, int64_t(1'003'600));
    QCOMPARE(doc->instancesOf("direct.fwd").size(), size_t(3));
    QVERIFY(doc->instancesOf("nope").empty());
  }

  void rangesNestPerLane() {
    // Two lanes whose ranges overlap in time: each nests within its own lane (depth 0
    // and 1 on both), where nesting per device would have made a staircase of 4 rows.
    using profiler::RangeCategory;
    profiler::Trace t;
    t.metadata.backend = "cpu";
    for (int lane = 0; lane < 2; ++lane) {
      profiler::Range outer =
          test_support::range("step", RangeCategory::iteration, lane * 100, 1000 + lane * 100);
      profiler::Range inner =
          test_support::range("conv1", RangeCategory::layer, lane * 100 + 10, 500 + lane * 100);
      outer.lane = inner.lane = lane;
      t.ranges.push_back(outer);
      t.ranges.push_back(inner);
    }
    profiler::sort_by_start(t);
    const TraceDocument doc(std::move(t), QStringLiteral("lanes"));
    QCOMPARE(doc.rangeRows().size(), size_t(4));
    QCOMPARE(doc.tracks().size(), size_t(2));
    for (size_t lane = 0; lane < 2; ++lane) {
      const Track& track = doc.tracks()[lane];
      QCOMPARE(track.key.lane, int(lane));
      QVERIFY(!track.activityLane);
      QCOMPARE(track.rangeRows.size(), size_t(2));
      QCOMPARE(doc.rangeRows()[track.rangeRows[0]].depth, 0);
      QCOMPARE(doc.rangeRows()[track.rangeRows[0]].label, QStringLiteral("iteration"));
      QCOMPARE(doc.rangeRows()[track.rangeRows[1]].depth, 1);
    }
    for (uint32_t i = 0; i < doc.trace().ranges.size(); ++i)
      QCOMPARE(doc.rangeRows()[doc.rangeRowOf(i)].lane, doc.trace().ranges[i].lane);
  }

  void kernelModelCounts() {
    QTemporaryDir dir;
    const auto doc = TraceDocument::load(test_support::writeTrace(dir, test_support::smallTrace()));
    // The document's table is profiler::kernel_table's, row for row.
    const auto expected = profiler::kernel_table(doc->trace());
    QCOMPARE(doc->kernelTable().size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      QCOMPARE(doc->kernelTable()[i].name, expected[i].name);
      QCOMPARE(doc->kernelTable()[i].total_ns, expected[i].total_ns);
    }
    QCOMPARE(doc->summary().activities, size_t(8));
    KernelTableModel model;
    model.setRows(doc->kernelTable());
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.columnCount(), int(KernelTableModel::ColumnCount));
    // kernel_table sorts by total descending: direct.fwd first with 3 calls.
    QCOMPARE(model.index(0, KernelTableModel::NameColumn).data().toString(),
             QStringLiteral("direct.fwd"));
    QCOMPARE(model.index(0, KernelTableModel::CallsColumn).data().toULongLong(), 3ull);
    QCOMPARE(
        model.index(0, KernelTableModel::TotalColumn).data(KernelTableModel::SortRole).toLongLong(),
        3000ll);
    QCOMPARE(model.index(0, KernelTableModel::TotalColumn).data().toString(),
             QStringLiteral("3.00 us"));
    QCOMPARE(
        model.headerData(KernelTableModel::ShareColumn, Qt::Horizontal, Qt::DisplayRole).toString(),
        QStringLiteral("Share"));
  }

  void sortsByTotalNumerically() {
    // Totals whose text sorts differently from their value ("9 ns" > "18 ns" > "10.0 us").
    auto stat = [](std::string name, int64_t total, size_t calls) {
      profiler::KernelStats k;
      k.name = std::move(name);
      k.total_ns = total;
      k.calls = calls;
      return k;
    };
    std::vector<profiler::KernelStats> rows{stat("a", 9, 1), stat("b", 10'000, 2),
                                            stat("c", 18, 3)};
    KernelTableModel model;
    model.setRows(rows);
    KernelTableProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.sort(KernelTableModel::TotalColumn, Qt::DescendingOrder);
    auto order = [&] {
      QString s;
      for (int r = 0; r < proxy.rowCount(); ++r) s += proxy.index(r, 0).data().toString();
      return s;
    };
    QCOMPARE(order(), QStringLiteral("bca"));
    proxy.sort(KernelTableModel::TotalColumn, Qt::AscendingOrder);
    QCOMPARE(order(), QStringLiteral("acb"));
    proxy.sort(KernelTableModel::CallsColumn, Qt::DescendingOrder);
    QCOMPARE(order(), QStringLiteral("cba"));
  }

  void filtersByName() {
    QTemporaryDir dir;
    const auto doc = TraceDocument::load(test_support::writeTrace(dir, test_support::smallTrace()));
    KernelTableModel model;
    model.setRows(doc->kernelTable());
    KernelTableProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setFilterFixedString(QStringLiteral("FWD"));  // case-insensitive
    QCOMPARE(proxy.rowCount(), 2);
    proxy.setFilterFixedString(QStringLiteral("sgd"));
    QCOMPARE(proxy.rowCount(), 1);
    QCOMPARE(proxy.index(0, KernelTableModel::CallsColumn).data().toULongLong(), 2ull);
    proxy.setFilterFixedString(QString());
    QCOMPARE(proxy.rowCount(), 4);
  }

  void classifiesKernels_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("family");
    QTest::addColumn<int>("algorithm");
    using F = KernelFamily;
    using A = ConvAlgorithmFamily;
    QTest::newRow("direct fwd") << "direct.fwd" << int(F::convForward) << int(A::direct);
    QTest::newRow("gemm bwd data") << "gemm.bwd_data" << int(F::convBackwardData) << int(A::gemm);
    QTest::newRow("fft-own bwd filter")
        << "fft-own.bwd_filter" << int(F::convBackwardFilter) << int(A::fft);
    QTest::newRow("fft-fftw fwd") << "fft-fftw.fwd" << int(F::convForward) << int(A::fft);
    QTest::newRow("bn") << "bn.bwd" << int(F::batchNorm) << int(A::none);
    QTest::newRow("relu") << "relu.fwd" << int(F::relu) << int(A::none);
    QTest::newRow("pool") << "maxpool.fwd" << int(F::pooling) << int(A::none);
    QTest::newRow("gap") << "gap.bwd" << int(F::pooling) << int(A::none);
    QTest::newRow("fc") << "fc.bwd_weight" << int(F::fullyConnected) << int(A::none);
    QTest::newRow("sgd") << "sgd" << int(F::update) << int(A::none);
    QTest::newRow("transpose") << "transpose.nchw_to_nhwc" << int(F::transpose) << int(A::none);
    QTest::newRow("copy") << "copy" << int(F::memory) << int(A::none);
    QTest::newRow("unknown") << "mystery_kernel" << int(F::other) << int(A::none);
  }
  void classifiesKernels() {
    QFETCH(QString, name);
    QFETCH(int, family);
    QFETCH(int, algorithm);
    const KernelClass k = classifyKernel(profiler::ActivityKind::kernel, name.toStdString());
    QCOMPARE(int(k.family), family);
    QCOMPARE(int(k.algorithm), algorithm);
  }
  void memcpyIsMemory() {
    QCOMPARE(classifyKernel(profiler::ActivityKind::memcpy, "direct.fwd").family,
             KernelFamily::memory);
  }
  // The small trace as two ranks with the same devices, lanes and correlations: every
  // lane, range row and track stays apart per rank; groups go rank, then its devices.
  void ranksKeepTheirLanesApartAndGroupFirst() {
    profiler::Trace t = test_support::smallTrace();
    t.activities.push_back(test_support::kernel("cudaLaunchKernel", -1, 0, 1'000'000, 1'000'010));
    t.activities.back().kind = profiler::ActivityKind::overhead;
    t.activities.back().correlation = 7;
    t.activities.front().correlation = 7;  // direct.fwd on device 0 lane 0
    profiler::Trace two = t;
    for (profiler::Activity a : t.activities) {
      a.rank = 1;
      two.activities.push_back(a);
    }
    for (profiler::Range r : t.ranges) {
      r.rank = 1;
      two.ranges.push_back(r);
    }
    const TraceDocument one(t, QString());
    const TraceDocument doc(two, QString());
    QVERIFY(doc.ranked());
    QVERIFY(!one.ranked());
    QCOMPARE(doc.lanes().size(), 2 * one.lanes().size());
    QCOMPARE(doc.rangeRows().size(), 2 * one.rangeRows().size());
    QCOMPARE(doc.tracks().size(), 2 * one.tracks().size());
    const auto& groups = doc.trackGroups();
    // rank 0 and its device groups, then rank 1 and its.
    QCOMPARE(groups.size(), size_t(2 + 2 * one.trackGroups().size()));
    const size_t perRank = 1 + one.trackGroups().size();
    for (size_t rank = 0; rank < 2; ++rank) {
      const TrackGroup& head = groups[rank * perRank];
      QCOMPARE(head.label, QStringLiteral("rank %1").arg(rank));
      QVERIFY(!head.parent.has_value());
      QVERIFY(!head.device.has_value());
      QCOMPARE(head.tracks.size(), one.tracks().size());
      for (size_t g = 1; g < perRank; ++g) {
        const TrackGroup& device = groups[rank * perRank + g];
        QCOMPARE(device.parent, std::optional<size_t>(rank * perRank));
        QCOMPARE(device.label, one.trackGroups()[g - 1].label);
        QCOMPARE(device.key, head.key + QStringLiteral(" / ") + device.label);
        for (size_t track : device.tracks) QCOMPARE(doc.tracks()[track].key.rank, int(rank));
      }
    }
    // Equal correlation ids pair within a rank only.
    QCOMPARE(doc.launchFlows().size(), size_t(2));
    for (const LaunchFlow& f : doc.launchFlows())
      QCOMPARE(doc.trace().activities[f.launch].rank, doc.trace().activities[f.kernel].rank);
    for (uint32_t i = 0; i < doc.trace().activities.size(); ++i)
      if (doc.trace().activities[i].correlation == 7)
        QCOMPARE(doc.launchFlowsOf(i).size(), size_t(1));
  }
};

QTEST_GUILESS_MAIN(TraceDocumentTest)
#include "tst_tracedocument.moc"
