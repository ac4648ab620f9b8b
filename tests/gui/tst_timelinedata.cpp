// TimelineData maths (zoom around a point, pan, fit-all, clamping, round trips) and
// ruler/duration formatting, as data-driven QTest rows; no widgets.
#include <QtTest>

#include "models/TimeFormat.h"
#include "models/TimelineData.h"

using tunescope::gui::TimelineData;

class TimelineDataTest : public QObject {
  Q_OBJECT
 private:
  static TimelineData make(int64_t start, int64_t end, int width) {
    TimelineData t;
    t.setWidth(width);
    t.setBounds(start, end);
    return t;
  }

 private slots:
  void fitAllShowsBounds() {
    TimelineData t = make(5000, 105000, 1000);
    QCOMPARE(t.viewStartNs, 5000.0);
    QCOMPARE(t.viewEndNs, 105000.0);
    QCOMPARE(t.nsPerPixel(), 100.0);
    t.zoomAround(300, 4);
    t.fitAll();
    QCOMPARE(t.viewStartNs, 5000.0);
    QCOMPARE(t.viewEndNs, 105000.0);
  }

  void mapRoundTrip_data() {
    QTest::addColumn<double>("x");
    QTest::newRow("left edge") << 0.0;
    QTest::newRow("middle") << 400.0;
    QTest::newRow("fraction") << 123.456;
    QTest::newRow("right edge") << 800.0;
    QTest::newRow("outside") << -50.0;
  }
  void mapRoundTrip() {
    QFETCH(double, x);
    TimelineData t = make(1'000'000'000, 1'000'800'000, 800);
    t.zoomAround(200, 3.7);
    QVERIFY(qAbs(t.mapTimeToX(t.mapXToTime(x)) - x) < 1e-6);
    const double time = t.mapXToTime(x);
    QVERIFY(qAbs(t.mapXToTime(t.mapTimeToX(time)) - time) < 1e-3);
  }

  void zoomKeepsPointFixed_data() {
    QTest::addColumn<double>("x");
    QTest::addColumn<double>("factor");
    QTest::newRow("in at centre") << 500.0 << 2.0;
    QTest::newRow("in near left") << 37.0 << 10.0;
    QTest::newRow("in near right") << 960.0 << 1.25;
    QTest::newRow("out after in") << 250.0 << 0.5;
    QTest::newRow("deep in") << 711.0 << 5000.0;
  }
  void zoomKeepsPointFixed() {
    QFETCH(double, x);
    QFETCH(double, factor);
    TimelineData t = make(0, 10'000'000, 1000);
    t.zoomAround(500, 8);  // start zoomed in so zooming out is not clamped
    const double anchor = t.mapXToTime(x);
    const double span = t.span();
    t.zoomAround(x, factor);
    QVERIFY2(qAbs(t.mapXToTime(x) - anchor) < 1e-6 * span, "the time under the cursor moved");
    QVERIFY(qAbs(t.span() - span / factor) < 1e-6 * span);
  }

  void panMovesWindow_data() {
    QTest::addColumn<double>("dx");
    QTest::addColumn<double>("expectedShiftNs");
    QTest::newRow("drag right shows earlier") << 100.0 << -100.0 * 1000;
    QTest::newRow("drag left shows later") << -250.0 << 250.0 * 1000;
    QTest::newRow("no move") << 0.0 << 0.0;
  }
  void panMovesWindow() {
    QFETCH(double, dx);
    QFETCH(double, expectedShiftNs);
    TimelineData t = make(0, 10'000'000, 1000);
    t.zoomAround(500, 10);  // span 1 ms, 1000 ns per pixel, centred
    const double start = t.viewStartNs, span = t.span();
    t.panByPixels(dx);
    QCOMPARE(t.viewStartNs, start + expectedShiftNs);
    QCOMPARE(t.span(), span);
  }

  void clamping() {
    TimelineData t = make(0, 1'000'000, 500);
    t.zoomAround(100, 0.1);  // cannot zoom out past the data
    QCOMPARE(t.viewStartNs, 0.0);
    QCOMPARE(t.viewEndNs, 1'000'000.0);
    t.zoomAround(250, 1e9);  // nor in past the minimum span
    QCOMPARE(t.span(), TimelineData::kMinSpanNs);
    t.fitAll();
    t.zoomAround(0, 4);
    t.panByPixels(10'000);  // far left: stops at the data start
    QCOMPARE(t.viewStartNs, 0.0);
    QCOMPARE(t.span(), 250'000.0);
    t.panByPixels(-1e7);  // far right: stops at the data end
    QCOMPARE(t.viewEndNs, 1'000'000.0);
    QCOMPARE(t.span(), 250'000.0);
  }

  void formatDuration_data() {
    QTest::addColumn<double>("ns");
    QTest::addColumn<QString>("text");
    QTest::newRow("ns") << 850.0 << "850 ns";
    QTest::newRow("us") << 12'340.0 << "12.3 us";
    QTest::newRow("ms") << 4'560'000.0 << "4.56 ms";
    QTest::newRow("s") << 1'200'000'000.0 << "1.20 s";
    QTest::newRow("hundreds of ms") << 742'000'000.0 << "742 ms";
  }
  void formatDuration() {
    QFETCH(double, ns);
    QFETCH(QString, text);
    QCOMPARE(tunescope::gui::formatDuration(ns), text);
  }

  void rulerTicks_data() {
    QTest::addColumn<qint64>("spanNs");
    QTest::addColumn<double>("stepNs");
    QTest::addColumn<QString>("secondLabel");
    // 1000 px, 90 px minimum spacing.
    QTest::newRow("ns") << qint64(1000) << 100.0 << "100 ns";
    QTest::newRow("us") << qint64(50'000) << 5'000.0 << "5 us";
    QTest::newRow("ms") << qint64(742'000'000) << 100'000'000.0 << "100 ms";
    QTest::newRow("s") << qint64(30'000'000'000) << 5'000'000'000.0 << "5 s";
  }
  void rulerTicks() {
    QFETCH(qint64, spanNs);
    QFETCH(double, stepNs);
    QFETCH(QString, secondLabel);
    TimelineData t = make(7'000'000, 7'000'000 + spanNs, 1000);
    QCOMPARE(tunescope::gui::rulerStepNs(t, 90), stepNs);
    const auto ticks = tunescope::gui::rulerTicks(t, 90);
    QVERIFY(ticks.size() >= 2);
    QCOMPARE(ticks[0].label.split(' ')[0], QStringLiteral("0"));
    QCOMPARE(ticks[1].label, secondLabel);
    QVERIFY(ticks[1].x - ticks[0].x >= 90);
  }
};

QTEST_APPLESS_MAIN(TimelineDataTest)
#include "tst_timelinedata.moc"
