// The level-of-detail builder: at most a few boxes per pixel column for 100k tiny
// events, every event accounted for, exact boxes when zoomed in, wide kernels never
// swallowed by a cluster; recordAt finds what is under the cursor.
#include <QtTest>

#include "models/LodBuilder.h"

using namespace tunescope::gui;

namespace {
// n back-to-back events of `duration` ns with `gap` ns between, from t0.
LaneSeries regular(size_t n, int64_t duration, int64_t gap, int64_t t0 = 1'000'000) {
  LaneSeries s;
  for (size_t i = 0; i < n; ++i) {
    const int64_t start = t0 + static_cast<int64_t>(i) * (duration + gap);
    s.add(start, start + duration, static_cast<uint32_t>(i));
  }
  return s;
}

TimelineData view(int64_t start, int64_t end, int width) {
  TimelineData t;
  t.setWidth(width);
  t.setBounds(start, end);
  return t;
}

int maxBoxesPerColumn(const std::vector<LodBox>& boxes, int width) {
  std::vector<int> perColumn(static_cast<size_t>(width), 0);
  for (const LodBox& b : boxes) {
    const int c0 = std::max(0, static_cast<int>(std::floor(b.x0)));
    const int c1 = std::min(width - 1, static_cast<int>(std::ceil(b.x1)) - 1);
    for (int c = c0; c <= c1; ++c) ++perColumn[static_cast<size_t>(c)];
  }
  return *std::max_element(perColumn.begin(), perColumn.end());
}
}  // namespace

class LodBuilderTest : public QObject {
  Q_OBJECT
 private slots:
  void tinyEventsAreMerged_data() {
    QTest::addColumn<int>("width");
    QTest::addColumn<qint64>("gap");
    QTest::newRow("1000 px, dense") << 1000 << qint64(5);
    QTest::newRow("1000 px, sparse") << 1000 << qint64(200);
    QTest::newRow("333 px") << 333 << qint64(50);
    QTest::newRow("2560 px") << 2560 << qint64(1);
  }
  void tinyEventsAreMerged() {
    QFETCH(int, width);
    QFETCH(qint64, gap);
    const size_t n = 100'000;
    const LaneSeries s = regular(n, 10, gap);
    const TimelineData tl = view(s.starts.front(), s.ends.back(), width);
    const std::vector<LodBox> boxes = buildLod(s, tl);
    QVERIFY(boxes.size() <= size_t(width) * 2);
    QVERIFY2(maxBoxesPerColumn(boxes, width) <= 3, "more than 3 boxes in a pixel column");
    size_t total = 0;
    for (const LodBox& b : boxes) total += b.count;
    QCOMPARE(total, n);  // every event is drawn, exactly once
    QVERIFY(boxes.front().isCluster());
    // Boxes come in time order and each cluster starts at its first record.
    for (size_t i = 1; i < boxes.size(); ++i) QVERIFY(boxes[i].first > boxes[i - 1].first);
    QCOMPARE(boxes[1].first, boxes[0].first + boxes[0].count);
  }

  void zoomedInGivesExactBoxes() {
    const LaneSeries s = regular(100'000, 10, 5);
    TimelineData tl = view(s.starts.front(), s.ends.back(), 1000);
    // Show events 5000..5019 (15 ns period): 300 ns over 1000 px, 33 px per event.
    tl.showWindow(static_cast<double>(s.starts[5000]), static_cast<double>(s.starts[5000]) + 300);
    const std::vector<LodBox> boxes = buildLod(s, tl);
    QCOMPARE(boxes.size(), size_t(20));
    for (size_t i = 0; i < boxes.size(); ++i) {
      QCOMPARE(boxes[i].count, 1u);
      QCOMPARE(boxes[i].first, uint32_t(5000 + i));
      QVERIFY(qAbs(boxes[i].x0 - tl.mapTimeToX(s.starts[5000 + i])) < 1e-9);
      QVERIFY(qAbs(boxes[i].x1 - boxes[i].x0 - 10 * 1000.0 / 300) < 1e-6);
    }
  }

  void straddlingRecordIsIncluded() {
    LaneSeries s;
    s.add(0, 1'000'000, 0);  // long kernel starting before the window
    s.add(1'000'100, 1'000'200, 1);
    TimelineData tl = view(0, 2'000'000, 1000);
    tl.showWindow(900'000, 1'100'000);
    const auto boxes = buildLod(s, tl);
    QCOMPARE(boxes.size(), size_t(2));
    QVERIFY(boxes[0].x0 < 0);
    QCOMPARE(boxes[0].first, 0u);
  }

  void wideKernelIsNotSwallowed() {
    // Tiny records right before a wide one: the wide one stays exact.
    LaneSeries s;
    for (uint32_t i = 0; i < 50; ++i) s.add(1000 + i * 2, 1001 + i * 2, i);
    s.add(1101, 500'000, 50);
    const TimelineData tl = view(0, 1'000'000, 1000);  // 1000 ns per pixel
    const auto boxes = buildLod(s, tl);
    QCOMPARE(boxes.size(), size_t(2));
    QCOMPARE(boxes[0].count, 50u);
    QCOMPARE(boxes[1].count, 1u);
    QCOMPARE(boxes[1].first, 50u);
    QVERIFY(qAbs(boxes[1].x1 - 500.0) < 1e-9);
  }

  void emptyAndOutsideWindow() {
    const TimelineData tl = view(0, 1000, 100);
    QVERIFY(buildLod(LaneSeries{}, tl).empty());
    LaneSeries s;
    s.add(5000, 6000, 0);
    QVERIFY(buildLod(s, tl).empty());
  }

  void recordAtFindsTheRecordUnderTheCursor() {
    const LaneSeries s = regular(10, 100, 100, 0);  // [0,100) [200,300) ...
    const TimelineData tl = view(0, 2000, 2000);    // 1 ns per pixel
    QCOMPARE(recordAt(s, tl, 250).value(), size_t(1));
    QCOMPARE(recordAt(s, tl, 302, 3).value(), size_t(1));  // within tolerance
    QVERIFY(!recordAt(s, tl, 350, 3).has_value());         // in a gap
  }
};

QTEST_APPLESS_MAIN(LodBuilderTest)
#include "tst_lodbuilder.moc"
