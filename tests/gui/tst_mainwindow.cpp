// Widget smoke test, offscreen: MainWindow opens a trace; zoom/pan/fit keys change the
// visible window; a rubber band fills the selection panel; a kernel row highlights and
// N steps through its instances; export writes a PNG; recent files are remembered; a
// bad file shows an error dialog naming it; dropped files open by their content.
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QImage>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QUrl>
#include <QtTest>

#include "GuiTestResults.h"
#include "GuiTestTraces.h"
#include "models/KernelTableModel.h"
#include "models/TraceLoader.h"
#include "widgets/ActivityLaneItem.h"
#include "widgets/KernelDock.h"
#include "widgets/MainWindow.h"
#include "widgets/TimelineView.h"

using namespace tunescope;
using namespace tunescope::gui;

class MainWindowTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString tracePath_;

  std::unique_ptr<MainWindow> openWindow() {
    auto w = std::make_unique<MainWindow>();
    w->resize(1200, 800);
    w->show();
    QSignalSpy loaded(w.get(), &MainWindow::documentLoaded);
    w->openFile(tracePath_);
    if (!loaded.wait(10'000)) qFatal("trace did not load");
    return w;
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings go to a test location
    QCoreApplication::setOrganizationName(QStringLiteral("tunescope-test"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_mainwindow"));
    tracePath_ = test_support::writeTrace(dir_, test_support::smallTrace());
  }

  void opensATrace() {
    auto w = openWindow();
    QVERIFY(w->document());
    QCOMPARE(w->kernelDock()->model()->rowCount(), 4);
    QCOMPARE(w->kernelDock()->proxy()->rowCount(), 4);
    const TimelineData& tl = w->timelineView()->timeline();
    QCOMPARE(tl.viewStartNs, 1'000'000.0);
    QCOMPARE(tl.viewEndNs, 1'003'600.0);
    QVERIFY(w->windowTitle().contains(QStringLiteral("small.json")));
    QCOMPARE(w->recentFiles().value(0), QFileInfo(tracePath_).absoluteFilePath());
  }

  void keysZoomPanAndFit() {
    auto w = openWindow();
    TimelineView* view = w->timelineView();
    view->setFocus();
    const double full = view->timeline().span();
    QTest::keyClick(view, Qt::Key_W);
    QVERIFY(qAbs(view->timeline().span() - full / 1.5) < 1e-6);
    QTest::keyClick(view, Qt::Key_Plus);
    const double zoomed = view->timeline().span();
    QVERIFY(qAbs(zoomed - full / 2.25) < 1e-6);
    const double start = view->timeline().viewStartNs;
    QTest::keyClick(view, Qt::Key_D);
    QVERIFY(view->timeline().viewStartNs > start);
    QTest::keyClick(view, Qt::Key_A);
    QVERIFY(qAbs(view->timeline().viewStartNs - start) < 1e-6);
    QCOMPARE(view->timeline().span(), zoomed);
    QTest::keyClick(view, Qt::Key_S);
    QVERIFY(view->timeline().span() > zoomed);
    QTest::keyClick(view, Qt::Key_F);
    QCOMPARE(view->timeline().span(), full);
  }

  void ctrlWheelZoomsAroundTheCursor() {
    auto w = openWindow();
    TimelineView* view = w->timelineView();
    const QPoint pos(TimelineView::kHeaderWidth + 300, 60);
    const double anchor = view->timeline().mapXToTime(300);
    QWheelEvent wheel(pos, view->mapToGlobal(pos), QPoint(), QPoint(0, 120), Qt::NoButton,
                      Qt::ControlModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(view, &wheel);
    QVERIFY(view->timeline().span() < 3600);
    QVERIFY(qAbs(view->timeline().mapXToTime(300) - anchor) < 1e-6);
  }

  void rubberBandFillsSelectionPanel() {
    auto w = openWindow();
    TimelineView* view = w->timelineView();
    QSignalSpy selected(view, &TimelineView::selectionChanged);
    const int x0 = TimelineView::kHeaderWidth + 100, x1 = TimelineView::kHeaderWidth + 500;
    QTest::mousePress(view, Qt::LeftButton, Qt::ShiftModifier, QPoint(x0, 80));
    QTest::mouseMove(view, QPoint(x0 + 200, 80));
    QTest::mouseMove(view, QPoint(x1, 80));
    QTest::mouseRelease(view, Qt::LeftButton, Qt::ShiftModifier, QPoint(x1, 80));
    QCOMPARE(selected.count(), 1);
    QVERIFY(view->selection().has_value());
    const auto& tl = view->timeline();
    QVERIFY(qAbs(double(view->selection()->start_ns) - tl.mapXToTime(100)) <= 1.0);
    QVERIFY(qAbs(double(view->selection()->end_ns) - tl.mapXToTime(500)) <= 1.0);
    auto* panel = w->findChild<QTextBrowser*>();
    QVERIFY(panel);
    QVERIFY(panel->toPlainText().contains(QStringLiteral("Selection")));
    QVERIFY(panel->toPlainText().contains(QStringLiteral("direct.fwd")));
    QTest::keyClick(view, Qt::Key_Escape);
    QVERIFY(!view->selection().has_value());
    QVERIFY(panel->toPlainText().contains(QStringLiteral("Whole trace")));
  }

  void kernelRowStepsThroughInstances() {
    auto w = openWindow();
    TimelineView* view = w->timelineView();
    QSignalSpy focused(view, &TimelineView::instanceFocused);
    w->kernelDock()->table()->selectRow(0);  // direct.fwd, 3 instances (sorted by total)
    QCOMPARE(w->kernelDock()->proxy()->index(0, 0).data().toString(), QStringLiteral("direct.fwd"));
    const auto& activities = w->document()->trace().activities;
    std::vector<int64_t> starts;
    for (int i = 0; i < 3; ++i) {
      QTest::keyClick(view, Qt::Key_N);
      QVERIFY(view->focusedActivity().has_value());
      const auto& a = activities[*view->focusedActivity()];
      QCOMPARE(a.name, std::string("direct.fwd"));
      starts.push_back(a.start_ns);
      // The focused instance is in view.
      QVERIFY(view->timeline().viewStartNs <= a.start_ns && a.end_ns <= view->timeline().viewEndNs);
    }
    QVERIFY(std::is_sorted(starts.begin(), starts.end()));
    QCOMPARE(focused.last().at(0).toInt(), 3);
    QCOMPARE(focused.last().at(1).toInt(), 3);
    QTest::keyClick(view, Qt::Key_N);  // wraps to the first
    QCOMPARE(activities[*view->focusedActivity()].start_ns, starts[0]);
    QTest::keyClick(view, Qt::Key_P);  // and back to the last
    QCOMPARE(activities[*view->focusedActivity()].start_ns, starts[2]);
  }

  void tooltipNamesTheActivity() {
    auto w = openWindow();
    const auto& acts = w->document()->trace().activities;
    const auto it =
        std::find_if(acts.begin(), acts.end(), [](const auto& a) { return a.flops > 0; });
    QVERIFY(it != acts.end());  // the first direct.fwd: 1000 ns, 2 MFLOP, 4 kB
    const QString html = activityTooltip(*w->document(), static_cast<uint32_t>(it - acts.begin()));
    for (const char* part :
         {"direct.fwd", "conv fwd", "device 0 · stream 0", "1.00 us", "2.00 MFLOP", "4.00 kB"})
      QVERIFY2(html.contains(QString::fromUtf8(part)), part);
  }

  void exportsPng() {
    auto w = openWindow();
    const QString png = dir_.filePath(QStringLiteral("timeline.png"));
    QVERIFY(w->exportTimelinePng(png));
    const QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.width(), w->timelineView()->width());
  }

  void cancellingALoadKeepsTheOpenTrace() {
    auto w = openWindow();
    const TraceDocumentPtr before = w->document();
    const QString big = test_support::writeTrace(dir_, test_support::manyEventsTrace(300'000, 4),
                                                 QStringLiteral("big-to-cancel.json"));
    QSignalSpy loaded(w.get(), &MainWindow::documentLoaded);
    QSignalSpy progress(w->traceLoader(), &TraceLoader::progress);
    w->openFile(big);
    QVERIFY(w->cancelLoadButton()->isVisible());
    QVERIFY(progress.wait(20'000));  // reading has begun
    QTest::mouseClick(w->cancelLoadButton(), Qt::LeftButton);
    QVERIFY(!w->cancelLoadButton()->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(!w->traceLoader()->hasRunningWorkers(), 20'000);
    QTest::qWait(100);
    QCOMPARE(loaded.count(), 0);
    QCOMPARE(w->document(), before);
    QVERIFY(w->windowTitle().contains(QStringLiteral("small.json")));
    QCOMPARE(w->kernelDock()->model()->rowCount(), 4);
    QVERIFY(w->statusBar()->currentMessage().contains(QStringLiteral("cancelled")));
  }

  void badFileShowsErrorDialog() {
    QFile bad(dir_.filePath(QStringLiteral("broken.json")));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("{\"traceEvents\": [");
    bad.close();
    MainWindow w;
    w.show();
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.openFile(bad.fileName());
    QVERIFY(failed.wait(10'000));
    QVERIFY(failed.at(0).at(0).toString().contains(QStringLiteral("broken.json")));
    auto* box = w.findChild<QMessageBox*>(QStringLiteral("loadErrorDialog"));
    QVERIFY(box);
    QVERIFY(box->isVisible());
    QVERIFY(box->text().contains(QStringLiteral("broken.json")));
    QVERIFY(!w.document());  // nothing half-loaded
    box->accept();
  }

  // Dropped files go where their content says, whatever their names: a trace named like
  // a DB to the timeline, a results DB named like a trace to Candidates; a drag that
  // carries no local file is refused.
  void droppedFilesOpenByContent() {
    const QString traceAsDb = dir_.filePath(QStringLiteral("trace-named.db"));
    QVERIFY(QFile::copy(tracePath_, traceAsDb));
    QTemporaryDir dbDir;
    const QString dbAsTrace = test_support::writeResultsDb(dbDir, QStringLiteral("results.json"));
    MainWindow w;
    w.show();
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    QSignalSpy results(&w, &MainWindow::resultsLoaded);

    QVERIFY(drop(w, traceAsDb));
    QVERIFY(loaded.wait(10'000));
    QCOMPARE(w.document()->filePath(), traceAsDb);
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::TimelineTab));

    QVERIFY(drop(w, dbAsTrace));
    QCOMPARE(results.count(), 1);
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::CandidatesTab));

    QMimeData text;
    text.setText(QStringLiteral("not a file"));
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &text, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &enter);
    QVERIFY(!enter.isAccepted());
  }

 private:
  // Drags `path` onto the window and drops it; true when the window took the drag.
  static bool drop(MainWindow& w, const QString& path) {
    QMimeData data;
    data.setUrls({QUrl::fromLocalFile(path)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &enter);
    if (!enter.isAccepted()) return false;
    QDropEvent dropped(QPointF(10, 10), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &dropped);
    return dropped.isAccepted();
  }
};

QTEST_MAIN(MainWindowTest)
#include "tst_mainwindow.moc"
