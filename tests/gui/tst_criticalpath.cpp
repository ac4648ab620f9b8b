// The critical-path view on a hand-built two-lane step whose answer is known: the model
// (path, breakdown, findings, dependency links) read back from a written trace, the
// timeline's outlines and dependency arrows from widget geometry, and the panel's
// breakdown table, findings list and finding activation.
#include <QCheckBox>
#include <QLabel>
#include <QListWidget>
#include <QTableWidget>
#include <QtTest>

#include "GuiTestTraces.h"
#include "models/CriticalPathModel.h"
#include "models/TraceDocument.h"
#include "widgets/CriticalPathPanel.h"
#include "widgets/TimelineView.h"

using namespace tunescope;
using namespace tunescope::gui;

namespace {

constexpr int64_t kOrigin = 1'000'000;  // a non-zero origin, as real clocks have

profiler::Flow eventFlow(int fromStream, int64_t fromNs, int toStream, int64_t toNs) {
  return profiler::Flow{
      profiler::FlowKind::event, {0, fromStream, kOrigin + fromNs}, {0, toStream, kOrigin + toNs}};
}

// Lane 0 runs A [0,10], B [12,20], D [35,40] (us); lane 1 runs pad [11,31] after A (an
// event), and D waits for pad (an event). One step [0,42]. The critical path is A, pad,
// D: compute 10 + 20 + 5 = 35 us; synchronisation 1 (pad after A) + 4 (D after pad) + 2
// (the host's wait after D) = 7 us.
profiler::Trace paddedStep() {
  using test_support::kernel;
  profiler::Trace t;
  t.metadata.backend = "cpu";
  const int64_t o = kOrigin;
  t.activities = {kernel("A", 0, 0, o, o + 10'000), kernel("pad", 0, 1, o + 11'000, o + 31'000),
                  kernel("B", 0, 0, o + 12'000, o + 20'000),
                  kernel("D", 0, 0, o + 35'000, o + 40'000)};
  t.flows = {eventFlow(0, 10'000, 1, 11'000), eventFlow(1, 31'000, 0, 33'000)};
  t.ranges = {test_support::range("train_step", profiler::RangeCategory::iteration, o, o + 42'000)};
  profiler::sort_by_start(t);
  return t;
}

uint32_t indexOf(const TraceDocument& doc, const std::string& name) {
  const auto& a = doc.trace().activities;
  for (uint32_t i = 0; i < a.size(); ++i)
    if (a[i].name == name) return i;
  return UINT32_MAX;
}

}  // namespace

class CriticalPathTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  TraceDocumentPtr load() {
    return TraceDocument::load(
        test_support::writeTrace(dir_, paddedStep(), QStringLiteral("p.json")));
  }

 private slots:
  void modelReadsTheWrittenFlowsAndFindsThePath() {
    const TraceDocumentPtr doc = load();
    QCOMPARE(doc->trace().flows.size(), size_t(2));  // flows survive the Chrome round trip
    const CriticalPathModel model(doc->trace());
    QVERIFY2(model.analysed(), qPrintable(model.whyNotAnalysed()));
    std::vector<std::string> names;
    for (uint32_t a : model.pathActivities()) names.push_back(doc->trace().activities[a].name);
    QCOMPARE(names, (std::vector<std::string>{"A", "pad", "D"}));
    QCOMPARE(model.stepWindow().duration_ns(), int64_t(42'000));
    const auto& rows = model.breakdown();
    QCOMPARE(
        rows.size(),
        tunescope::profiler::analysis::kBoundCount);  // one row per bound, communication included
    QCOMPARE(rows[0].bound, QStringLiteral("compute"));
    QCOMPARE(rows[0].ns, int64_t(35'000));
    QCOMPARE(rows[2].bound, QStringLiteral("synchronisation"));
    QCOMPARE(rows[2].ns, int64_t(7'000));
    QVERIFY(model.onPath(indexOf(*doc, "pad")));
    QVERIFY(!model.onPath(indexOf(*doc, "B")));
    // D's links: the event from pad (lane order from B is not a link).
    const auto links = model.linksOf(indexOf(*doc, "D"));
    QCOMPARE(links.size(), size_t(1));
    QCOMPARE(links[0].from, indexOf(*doc, "pad"));
    QCOMPARE(links[0].kind, profiler::analysis::EdgeKind::event);
    QCOMPARE(model.linksOf(indexOf(*doc, "pad")).size(), size_t(2));  // from A, to D
    // The padding kernel is the first finding, its evidence found on the path.
    QVERIFY(!model.findings().empty());
    QCOMPARE(model.findings()[0].rule, std::string("data-movement"));
    QVERIFY(model.findings()[0].gain_ns > 0);
    QCOMPARE(model.firstOf(model.findings()[0].evidence), std::optional(indexOf(*doc, "pad")));
    QCOMPARE(model.firstLinkedOnPath(), std::optional(indexOf(*doc, "A")));  // A -> pad
  }

  void timelineOutlinesThePathAndDrawsTheSelectedDependencies() {
    const TraceDocumentPtr doc = load();
    TimelineView view;
    view.resize(1200, 500);
    view.setDocument(doc);
    view.setCriticalPath(std::make_shared<const CriticalPathModel>(doc->trace()));
    view.showWindow(double(kOrigin), double(kOrigin + 42'000));
    const std::vector<QRectF> boxes = view.criticalPathRects();
    QCOMPARE(boxes.size(), size_t(3));
    // pad is on lane 1's track, A and D on lane 0's; each box spans its record's time.
    const double perNs = view.timeline().width / 42'000.0;
    QVERIFY(std::abs(boxes[1].width() - 20'000 * perNs) < 2);
    QVERIFY(std::abs(boxes[0].left() - view.headerWidth()) < 2);
    QVERIFY(boxes[0].top() != boxes[1].top());
    QCOMPARE(boxes[0].top(), boxes[2].top());
    for (const QRectF& box : boxes) QVERIFY(view.rect().contains(box.center().toPoint()));

    QVERIFY(view.dependencyLines().empty());  // nothing selected
    view.selectActivity(indexOf(*doc, "D"));
    const auto lines = view.dependencyLines();
    QCOMPARE(lines.size(), size_t(1));
    // From pad's end to D's start.
    QVERIFY(std::abs(lines[0].p1().x() - boxes[1].right()) < 1);
    QVERIFY(std::abs(lines[0].p2().x() - boxes[2].left()) < 2);

    view.setCriticalPathShown(false);
    QVERIFY(view.criticalPathRects().empty());
  }

  void panelListsTheBreakdownAndSelectsAFindingsEvidence() {
    const TraceDocumentPtr doc = load();
    TimelineView view;
    view.resize(1200, 500);
    view.setDocument(doc);
    CriticalPathPanel panel;
    panel.attach(&view);
    panel.setDocument(doc);
    QVERIFY(view.criticalPath());
    QTableWidget* table = panel.breakdownTable();
    QCOMPARE(table->rowCount(), int(tunescope::profiler::analysis::kBoundCount));
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("compute"));
    QCOMPARE(table->item(0, 2)->text(), QStringLiteral("83.3 %"));  // 35 of 42
    QCOMPARE(table->item(2, 2)->text(), QStringLiteral("16.7 %"));  // 7 of 42
    QVERIFY(panel.titleLabel()->text().contains(QStringLiteral("train_step")));
    QCOMPARE(panel.findingsList()->count(), int(panel.model()->findings().size()));
    QVERIFY(panel.findingsList()->item(0)->text().startsWith(QStringLiteral("[data-movement]")));

    panel.activateFinding(0);
    QCOMPARE(view.selectedActivity(), std::optional(indexOf(*doc, "pad")));
    QCOMPARE(view.dependencyLines().size(), size_t(2));  // from A, to D
    QVERIFY(view.timeline().viewStartNs < double(kOrigin + 1));
    QVERIFY(view.timeline().viewEndNs > double(kOrigin + 41'999));

    panel.highlightBox()->setChecked(false);
    QVERIFY(!view.criticalPathShown());
  }

  void aTraceWithoutDependenciesSaysWhy() {
    profiler::Trace t = paddedStep();
    t.flows.clear();
    const CriticalPathModel model(t);
    QVERIFY(!model.analysed());
    QVERIFY(model.whyNotAnalysed().contains(QStringLiteral("no dependencies")));
  }
};

QTEST_MAIN(CriticalPathTest)
#include "tst_criticalpath.moc"
