// tunescope-gui [trace.json[.gz] | results.sqlite] [--compare B.json] [--run-tune DIR]
// [--screenshot FILE.png]: the timeline, candidates, compare and run viewer.
// --screenshot renders the main window to a PNG once the file is loaded (the trace, the
// results DB, both compared traces, or the tune of --run-tune finished; with
// --screenshot-at-round N, that tune's interleaved round N) and exits (used by
// scripts/gui-screenshot.sh under Xvfb).
#include <QApplication>
#include <QCommandLineParser>
#include <QTableView>
#include <QTimer>
#include <cstdio>
#include <optional>

#include "models/CandidatesModel.h"
#include "models/KernelTableModel.h"
#include "models/TuneEvent.h"
#include "models/TuneProcess.h"
#include "widgets/CandidatesChart.h"
#include "widgets/CandidatesView.h"
#include "widgets/CriticalPathPanel.h"
#include "widgets/KernelDock.h"
#include "widgets/MainWindow.h"
#include "widgets/RunView.h"
#include "widgets/TimelineView.h"

using namespace tunescope;

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("tunescope"));
  QApplication::setApplicationName(QStringLiteral("tunescope-gui"));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Timeline viewer for tunescope traces"));
  parser.addHelpOption();
  parser.addPositionalArgument(
      QStringLiteral("file"),
      QStringLiteral("Chrome trace JSON (plain or gzip) or a tunescope results DB"));
  QCommandLineOption compare(
      QStringLiteral("compare"),
      QStringLiteral("Compare the trace with this second trace (Compare tab)."),
      QStringLiteral("trace"));
  QCommandLineOption row(QStringLiteral("row"),
                         QStringLiteral("Results DB: select this ranked trial (1-based)."),
                         QStringLiteral("n"));
  QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                QStringLiteral("Save the window as PNG after loading, then exit."),
                                QStringLiteral("file"));
  QCommandLineOption size(QStringLiteral("size"),
                          QStringLiteral("Window size WxH (default 1600x1000)."),
                          QStringLiteral("WxH"), QStringLiteral("1600x1000"));
  QCommandLineOption highlight(
      QStringLiteral("highlight"),
      QStringLiteral("Select this kernel in the table (and focus its first instance)."),
      QStringLiteral("name"));
  QCommandLineOption select(
      QStringLiteral("select"),
      QStringLiteral("Select the window FROM,TO after loading (ms from the trace start, or N%)."),
      QStringLiteral("from,to"));
  QCommandLineOption view(QStringLiteral("view"),
                          QStringLiteral("Show the window FROM,TO after loading (as --select)."),
                          QStringLiteral("from,to"));
  QCommandLineOption runTune(
      QStringLiteral("run-tune"),
      QStringLiteral("Start a tune in the Run tab with its default form, writing results.sqlite, "
                     "tuned.json and traces/ to this folder."),
      QStringLiteral("dir"));
  QCommandLineOption runOptions(
      QStringLiteral("run-options"),
      QStringLiteral("More `tunescope tune` options for --run-tune (the form's Other options)."),
      QStringLiteral("options"));
  QCommandLineOption finding(
      QStringLiteral("finding"),
      QStringLiteral("Trace: show critical-path finding N (1-based) after loading: its step, with "
                     "its evidence selected."),
      QStringLiteral("N"));
  QCommandLineOption runModel(QStringLiteral("run-model"),
                              QStringLiteral("The model of --run-tune's form (default lenet5)."),
                              QStringLiteral("model"));
  QCommandLineOption atRound(
      QStringLiteral("screenshot-at-round"),
      QStringLiteral("With --run-tune: take the screenshot at interleaved round N of the tune "
                     "(the Run tab while its rounds run) instead of when it has finished."),
      QStringLiteral("N"));
  parser.addOptions({screenshot, size, highlight, select, view, compare, row, runTune, runOptions,
                     finding, runModel, atRound});
  parser.process(app);

  tunescope::gui::MainWindow window;
  const QStringList wh = parser.value(size).split(QLatin1Char('x'));
  if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
  window.show();

  const QStringList args = parser.positionalArguments();
  const QString shot = parser.value(screenshot);
  if (!shot.isEmpty() && args.isEmpty() && !parser.isSet(runTune)) {
    std::fprintf(stderr, "tunescope-gui: --screenshot needs a trace file or --run-tune\n");
    return 2;
  }
  // Let layouts settle before grabbing.
  auto grabLater = [&] {
    QTimer::singleShot(300, &window, [&] {
      const bool ok = window.grab().save(shot, "PNG");
      std::fprintf(ok ? stdout : stderr, "tunescope-gui: %s %s\n", ok ? "wrote" : "could not write",
                   qPrintable(shot));
      QApplication::exit(ok ? 0 : 1);
    });
  };
  const bool comparing = parser.isSet(compare) && !args.isEmpty();
  if (!shot.isEmpty()) {
    QObject::connect(&window, &tunescope::gui::MainWindow::resultsLoaded, &window, [&] {
      if (parser.isSet(row)) {
        const int r = parser.value(row).toInt() - 1;
        window.candidatesView()->table()->selectRow(r);
        window.candidatesView()->chart()->setCurrentRow(r);
      }
      grabLater();
    });
    QObject::connect(&window, &tunescope::gui::MainWindow::compareReady, &window, grabLater);
    QObject::connect(&window, &tunescope::gui::MainWindow::documentLoaded, &window, [&] {
      if (comparing) return;  // the Compare tab is the picture
      if (parser.isSet(highlight)) {
        const QAbstractItemModel* proxy = window.kernelDock()->proxy();
        for (int r = 0; r < proxy->rowCount(); ++r)
          if (proxy->index(r, 0).data().toString() == parser.value(highlight))
            window.kernelDock()->table()->selectRow(r);
      }
      const profiler::Interval extent = window.document()->extent();
      // "FROM,TO": "12.5" is ms from the trace start, "40%" a share of the trace.
      auto parseWindow = [&](const QString& text) -> std::optional<profiler::Interval> {
        const QStringList parts = text.split(QLatin1Char(','));
        if (parts.size() != 2) return std::nullopt;
        auto at = [&](QString v) {
          if (v.endsWith(QLatin1Char('%'))) {
            v.chop(1);
            return extent.start_ns + qint64(v.toDouble() / 100 * double(extent.duration_ns()));
          }
          return extent.start_ns + qint64(v.toDouble() * 1e6);
        };
        return profiler::Interval{at(parts[0]), at(parts[1])};
      };
      if (auto w = parseWindow(parser.value(view)))
        window.timelineView()->showWindow(double(w->start_ns), double(w->end_ns));
      if (auto w = parseWindow(parser.value(select))) window.timelineView()->setSelection(*w);
      if (parser.isSet(finding))
        window.criticalPathPanel()->activateFinding(parser.value(finding).toInt() - 1);
      grabLater();
    });
    QObject::connect(&window, &tunescope::gui::MainWindow::loadFailed, &window,
                     [](const QString& message) {
                       std::fprintf(stderr, "tunescope-gui: %s\n", qPrintable(message));
                       QApplication::exit(1);
                     });
  }
  if (parser.isSet(runTune)) {
    tunescope::gui::RunView* run = window.runView();
    tunescope::gui::TuneRequest request =
        tunescope::gui::TuneRequest::inFolder(parser.value(runTune));
    request.extraArguments = parser.value(runOptions);
    if (parser.isSet(runModel)) request.model = parser.value(runModel);
    run->setRequest(request);
    window.tabs()->setCurrentWidget(run);
    if (!shot.isEmpty() && parser.isSet(atRound)) {
      const int round = parser.value(atRound).toInt();
      QObject::connect(
          run->process(), &tunescope::gui::TuneProcess::tuneEvent, &window,
          [&, round, grabbing = false](const tunescope::gui::TuneEvent& e) mutable {
            if (grabbing || e.kind != tunescope::gui::TuneEvent::Kind::Round || e.round < round)
              return;
            grabbing = true;
            grabLater();
          });
      QObject::connect(run, &tunescope::gui::RunView::runFinished, &window,
                       [&, round](const tunescope::gui::TuneOutcome& outcome) {
                         std::fprintf(stderr, "tunescope-gui: the tune ended before round %d: %s\n",
                                      round, qPrintable(outcome.message));
                         QApplication::exit(1);
                       });
    } else if (!shot.isEmpty()) {
      run->setOpenWhenDone(false);  // the finished Run tab is the picture
      QObject::connect(run, &tunescope::gui::RunView::runFinished, &window,
                       [&](const tunescope::gui::TuneOutcome& outcome) {
                         if (outcome.result == tunescope::gui::TuneOutcome::Result::Completed)
                           return grabLater();
                         std::fprintf(stderr, "tunescope-gui: the tune failed: %s\n",
                                      qPrintable(outcome.message));
                         QApplication::exit(1);
                       });
    }
    run->start();
  } else if (comparing)
    window.compareFiles(args.first(), parser.value(compare));
  else if (!args.isEmpty())
    window.openFile(args.first());
  return app.exec();
}
