// TimelineView with more rows than fit, offscreen: a vertical scroll bar appears, the
// plain wheel and Up/Down/PageDown scroll the rows under a fixed ruler, Ctrl+wheel
// zooms and Shift+wheel pans (Perfetto's and Nsight Systems' wheel), and stepping to a
// kernel's instance scrolls its lane into view.
#include <QApplication>
#include <QImage>
#include <QScrollBar>
#include <QWheelEvent>
#include <QtTest>

#include "GuiTestTraces.h"
#include "widgets/TimelineView.h"

using namespace tunescope;
using namespace tunescope::gui;

class TimelineScrollTest : public QObject {
  Q_OBJECT
 private:
  static constexpr int kLanes = 40;

  static TraceDocumentPtr manyLanes() {
    return std::make_shared<const TraceDocument>(test_support::manyEventsTrace(4000, kLanes),
                                                 QStringLiteral("lanes"));
  }

  static void wheel(TimelineView& view, QPoint delta, Qt::KeyboardModifiers modifiers) {
    const QPointF pos(TimelineView::kHeaderWidth + 200, 100);
    QWheelEvent event(pos, view.mapToGlobal(pos), QPoint(), delta, Qt::NoButton, modifiers,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(&view, &event);
  }

  static QImage rulerOf(TimelineView& view) {
    QImage image(view.size(), QImage::Format_ARGB32_Premultiplied);
    view.render(&image);
    return image.copy(0, 0, view.width(), TimelineView::kRulerHeight);
  }

 private slots:
  void rowsThatFitNeedNoScrollBar() {
    TimelineView view;
    view.resize(1000, 600);
    view.setDocument(
        std::make_shared<const TraceDocument>(test_support::smallTrace(), QStringLiteral("small")));
    QVERIFY(view.verticalScrollBar()->isHidden());
    QCOMPARE(view.timeline().width, 1000 - TimelineView::kHeaderWidth);
    wheel(view, {0, -120}, Qt::NoModifier);  // nothing to scroll, and the wheel does not zoom
    QCOMPARE(view.timeline().span(), 3600.0);
  }

  void manyLanesScrollUnderAFixedRuler() {
    TimelineView view;
    view.resize(1000, 400);
    const TraceDocumentPtr doc = manyLanes();
    view.setDocument(doc);
    QScrollBar* bar = view.verticalScrollBar();
    QVERIFY(!bar->isHidden());
    const int viewport = 400 - TimelineView::kRulerHeight - TimelineView::kLegendHeight;
    QCOMPARE(bar->pageStep(), viewport);
    // One device group: its header, then 40 tracks (a "run" range above each lane) at
    // their smallest heights.
    const int rows = view.shownRowCount();
    QCOMPARE(rows, 1 + kLanes);
    QCOMPARE(doc->rangeRows().size(), size_t(kLanes));
    QCOMPARE(view.activityLaneRect(0).height(), 20);
    QCOMPARE(view.rangeRowRect(0, 0).height(), 8);
    const int content = view.itemTop(rows) - view.itemTop(0);
    QCOMPARE(bar->maximum(), content - viewport);
    QCOMPARE(view.timeline().width, 1000 - TimelineView::kHeaderWidth - bar->width());

    const QImage rulerBefore = rulerOf(view);
    const int laneTop = view.itemTop(5);
    const double span = view.timeline().span();
    wheel(view, {0, -120}, Qt::NoModifier);  // one notch down
    QCOMPARE(bar->value(), 60);
    QCOMPARE(view.itemTop(5), laneTop - 60);
    QCOMPARE(view.timeline().span(), span);  // scrolling is not zooming
    QCOMPARE(rulerOf(view), rulerBefore);

    QTest::keyClick(&view, Qt::Key_PageDown);
    QCOMPARE(bar->value(), 60 + viewport);
    QTest::keyClick(&view, Qt::Key_Up);
    QCOMPARE(bar->value(), 60 + viewport - bar->singleStep());
    for (int i = 0; i < 100; ++i) wheel(view, {0, -120}, Qt::NoModifier);
    QCOMPARE(bar->value(), bar->maximum());  // stops at the last lane
    QCOMPARE(view.itemTop(rows),
             400 - TimelineView::kLegendHeight);  // the last lane ends at the legend
  }

  void ctrlWheelZoomsAndShiftWheelPans() {
    TimelineView view;
    view.resize(1000, 400);
    view.setDocument(manyLanes());
    const double span = view.timeline().span();
    wheel(view, {0, 120}, Qt::ControlModifier);
    QVERIFY(view.timeline().span() < span);
    QCOMPARE(view.verticalScrollBar()->value(), 0);
    const double zoomed = view.timeline().span(), start = view.timeline().viewStartNs;
    wheel(view, {0, -120}, Qt::ShiftModifier);
    QCOMPARE(view.timeline().span(), zoomed);
    QVERIFY(view.timeline().viewStartNs != start);
    QCOMPARE(view.verticalScrollBar()->value(), 0);
  }

  void steppingToAnInstanceScrollsItsLaneIntoView() {
    TimelineView view;
    view.resize(1000, 400);
    TraceDocumentPtr doc = manyLanes();
    view.setDocument(doc);
    // The first bn.fwd on the last lane: kernels go round-robin over lanes and names.
    view.setHighlightedKernel(QStringLiteral("bn.fwd"));
    uint32_t target = 0;
    while (doc->trace().activities[target].stream != kLanes - 2) {
      QVERIFY(view.focusNextInstance());
      target = *view.focusedActivity();
    }
    const QRect track = view.trackRect(kLanes - 2);
    QVERIFY(view.verticalScrollBar()->value() > 0);
    QVERIFY(track.top() >= TimelineView::kRulerHeight);
    QVERIFY(track.bottom() < 400 - TimelineView::kLegendHeight);
  }
};

QTEST_MAIN(TimelineScrollTest)
#include "tst_timelinescroll.moc"
