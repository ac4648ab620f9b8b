// What the Run tab asks `tunescope tune` to do: the form's values, turned into the
// CLI's arguments (always with --progress jsonl, which the Run tab reads). Plain data,
// so the argument list is tested without a window or a child process.
#pragma once

#include <QMap>
#include <QString>
#include <QStringList>
#include <QVector>

#include "models/KnobRows.h"

namespace tunescope::gui {

struct TuneRequest {
  QString model = QStringLiteral("lenet5");
  QString data = QStringLiteral("fake");  // fake | fashion-mnist | a folder of IDX files
  int batch = 32;
  QString strategy =
      QStringLiteral("auto");  // auto | exhaustive | per-layer | halving (the CLI's default first)
  double budgetSeconds = 0;    // 0: no budget
  QStringList algorithms;      // empty: every algorithm the backend registers
  // Knob key -> the values to try, comma-separated as on the CLI ("fft_tile" -> "auto,16");
  // an empty or absent entry leaves the CLI's tune default.
  QMap<QString, QString> knobLists{{QStringLiteral("threads"), defaultThreads()}};
  // The catalog the keys come from (`tunescope knobs --json`): each knob's list flag, and
  // the order its lists are passed in. A key it lacks is passed as --<key>-list anyway,
  // so that the CLI's message names it.
  QVector<KnobRow> knobCatalog;
  int steps = 5;
  int warmup = 2;
  QString dbPath;
  QString outPath;
  QString traceDir;        // empty: no traces
  QString extraArguments;  // more CLI options, split as a shell would ("--fake-count 256")

  // `tune ... --progress jsonl`; values are passed as given, so the CLI (not the GUI)
  // judges them and its message names the option.
  QStringList arguments() const;
  // "1,N" for N hardware threads (one thread and all of them), "1" on one core.
  static QString defaultThreads();
  // A request whose files all go to `dir` (results.sqlite, tuned.json, traces/).
  static TuneRequest inFolder(const QString& dir);
};

}  // namespace tunescope::gui
