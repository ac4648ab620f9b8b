// The knob catalog as the Run tab sees it: `tunescope knobs --json` (schema
// tunescope.knobs/1, written by cli/KnobsCommand.cpp) parsed into one row per knob.
// The GUI links no kernels, so the CLI is the only place that knows the knobs the
// algorithms declare; asking it keeps the form in step with whatever it was built with.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <QVector>
#include <optional>

namespace tunescope::gui {

struct KnobRow {
  QString key;              // the config key ("fft_tile")
  QString listFlag;         // the tune flag for a list of values ("--fft-tile-list")
  QStringList tuneDefault;  // what tune tries when no list is given
  QString values;           // the accepted values, in words ("1..64", "nchw, nhwc")
  QString help;
  QString scope;       // "run" (every run reads it) | "conv_algorithm"
  QStringList readBy;  // conv_algorithm: "backend:algorithm" of the algorithms that read it
};

// nullopt and *error naming the problem (and the knob) for text that is not a catalog of the
// schema.
std::optional<QVector<KnobRow>> parseKnobRows(const QByteArray& json, QString* error);

// Runs `program knobs --json` and returns its stdout; nullopt and *error (naming the
// program) when it cannot start, fails, or has not finished after timeoutMs.
std::optional<QByteArray> readKnobCatalogJson(const QString& program, QString* error,
                                              int timeoutMs = 10'000);

// Both of the above: the rows of the catalog of `program`.
std::optional<QVector<KnobRow>> loadKnobRows(const QString& program, QString* error,
                                             int timeoutMs = 10'000);

}  // namespace tunescope::gui
