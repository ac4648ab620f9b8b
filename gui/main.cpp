// tunescope-gui [trace.json[.gz]] [--screenshot FILE.png]: the timeline viewer.
// --screenshot renders the main window to a PNG once the trace is loaded and exits
// (used by scripts/gui-screenshot.sh under Xvfb).
#include <QApplication>
#include <QCommandLineParser>
#include <QTableView>
#include <QTimer>
#include <cstdio>
#include <optional>

#include "models/KernelTableModel.h"
#include "widgets/KernelDock.h"
#include "widgets/MainWindow.h"
#include "widgets/TimelineView.h"

using namespace tunescope;

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("tunescope"));
  QApplication::setApplicationName(QStringLiteral("tunescope-gui"));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Timeline viewer for tunescope traces"));
  parser.addHelpOption();
  parser.addPositionalArgument(QStringLiteral("trace"), QStringLiteral("Chrome trace JSON (plain or gzip)"));
  QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                QStringLiteral("Save the window as PNG after loading, then exit."),
                                QStringLiteral("file"));
  QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size WxH (default 1600x1000)."),
                          QStringLiteral("WxH"), QStringLiteral("1600x1000"));
  QCommandLineOption highlight(QStringLiteral("highlight"),
                               QStringLiteral("Select this kernel in the table (and focus its first instance)."),
                               QStringLiteral("name"));
  QCommandLineOption select(QStringLiteral("select"),
                            QStringLiteral("Select the window FROM,TO after loading (ms from the trace start, or N%)."),
                            QStringLiteral("from,to"));
  QCommandLineOption view(QStringLiteral("view"), QStringLiteral("Show the window FROM,TO after loading (as --select)."),
                          QStringLiteral("from,to"));
  parser.addOptions({screenshot, size, highlight, select, view});
  parser.process(app);

  tunescope::gui::MainWindow window;
  const QStringList wh = parser.value(size).split(QLatin1Char('x'));
  if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
  window.show();

  const QStringList args = parser.positionalArguments();
  const QString shot = parser.value(screenshot);
  if (!shot.isEmpty() && args.isEmpty()) {
    std::fprintf(stderr, "tunescope-gui: --screenshot needs a trace file\n");
    return 2;
  }
  if (!shot.isEmpty()) {
    QObject::connect(&window, &tunescope::gui::MainWindow::documentLoaded, &window, [&] {
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
      if (auto w = parseWindow(parser.value(view))) window.timelineView()->showWindow(double(w->start_ns), double(w->end_ns));
      if (auto w = parseWindow(parser.value(select))) window.timelineView()->setSelection(*w);
      // Let layouts settle before grabbing.
      QTimer::singleShot(300, &window, [&] {
        const bool ok = window.grab().save(shot, "PNG");
        std::fprintf(ok ? stdout : stderr, "tunescope-gui: %s %s\n", ok ? "wrote" : "could not write",
                     qPrintable(shot));
        QApplication::exit(ok ? 0 : 1);
      });
    });
    QObject::connect(&window, &tunescope::gui::MainWindow::loadFailed, &window, [](const QString& message) {
      std::fprintf(stderr, "tunescope-gui: %s\n", qPrintable(message));
      QApplication::exit(1);
    });
  }
  if (!args.isEmpty()) window.openFile(args.first());
  return app.exec();
}
