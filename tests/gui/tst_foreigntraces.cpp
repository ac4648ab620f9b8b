// The GUI opens other tools' traces through profiler::read_trace_file, offscreen: a
// PyTorch profiler trace (the torch 1.13 fixture) and an Nsight Systems SQLite export
// load as timelines with their kernel tables, and the Compare tab puts a PyTorch trace
// beside a tunescope trace.
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <set>

#include "GuiTestTraces.h"
#include "models/KernelTableModel.h"
#include "models/TraceCompare.h"
#include "profiler/ChromeTraceReader.h"
#include "profiler/FileKind.h"
#include "profiler/Metrics.h"
#include "profiler/NsysSqliteWriter.h"
#include "widgets/CompareView.h"
#include "widgets/KernelDock.h"
#include "widgets/MainWindow.h"

using namespace tunescope;
using namespace tunescope::gui;

class ForeignTracesTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  const QString pytorchPath_ =
      QStringLiteral(TUNESCOPE_TEST_DATA_DIR "/pytorch/lenet5-cpu-torch1.13-legacy.json");

  static void openAndWait(MainWindow& w, const QString& path) {
    QSignalSpy loaded(&w, &MainWindow::documentLoaded);
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.openFile(path);
    QVERIFY2(loaded.wait(10'000),
             failed.isEmpty() ? "no answer" : qPrintable(failed.at(0).at(0).toString()));
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("tunescope-test"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_foreigntraces"));
  }

  void opensAPyTorchTraceWithItsKernelTable() {
    MainWindow w;
    w.show();
    openAndWait(w, pytorchPath_);
    const profiler::Trace expected = profiler::read_chrome_trace(pytorchPath_.toStdString());
    QCOMPARE(w.document()->trace().activities.size(), expected.activities.size());
    QCOMPARE(w.document()->trace().ranges.size(), expected.ranges.size());
    QVERIFY(!expected.activities.empty());
    QCOMPARE(w.kernelDock()->model()->rowCount(),
             static_cast<int>(profiler::summarize(expected).kernels.size()));
    QCOMPARE(w.tabs()->currentIndex(), static_cast<int>(MainWindow::TimelineTab));
  }

  void opensAnNsightSystemsExportAsATrace() {
    const QString path = dir_.filePath(QStringLiteral("run.sqlite"));
    profiler::NsysSqliteWriter().write(test_support::smallTrace(), path.toStdString());
    QVERIFY(profiler::sniff_file(path.toStdString()) == profiler::FileKind::nsys_sqlite);
    MainWindow w;
    w.show();
    QSignalSpy results(&w, &MainWindow::resultsLoaded);
    openAndWait(w, path);
    QCOMPARE(results.count(), 0);  // not taken for a results DB
    QCOMPARE(w.document()->trace().activities.size(), size_t(8));
    QCOMPARE(w.document()->lanes().size(), size_t(3));
    QCOMPARE(w.kernelDock()->model()->rowCount(), 4);
  }

  void comparesAPyTorchTraceWithATunescopeTrace() {
    const QString ours = test_support::writeTrace(dir_, test_support::smallTrace());
    MainWindow w;
    w.show();
    QSignalSpy ready(&w, &MainWindow::compareReady);
    w.compareFiles(pytorchPath_, ours);
    QVERIFY(ready.wait(10'000));
    QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.compareView()));
    const profiler::Trace pytorch = profiler::read_chrome_trace(pytorchPath_.toStdString());
    // The difference table lists the kernels of both traces.
    std::set<std::string> names;
    for (const auto& k : profiler::summarize(pytorch).kernels) names.insert(k.name);
    for (const auto& k : profiler::summarize(test_support::smallTrace()).kernels)
      names.insert(k.name);
    QCOMPARE(w.compareView()->diffModel()->rowCount(), static_cast<int>(names.size()));
  }
};

QTEST_MAIN(ForeignTracesTest)
#include "tst_foreigntraces.moc"
