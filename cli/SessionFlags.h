// The command-line options shared by `train`, `profile` and `tune`, bound to SessionOptions.
// Every knob of the catalog (core/base/Knob.h) gets its flag from its spec (`--streams`,
// `--fft-tile`, ...). `--config FILE` loads a tuned RunConfig; flags given explicitly on the
// command line override the file's values (so a tuned config can be tried at another
// batch size).
#pragma once

#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "core/engine/TrainingSession.h"

namespace tunescope::cli {

struct SessionFlags {
  SessionOptions options;
  std::string conv;                              // empty: the backend's default algorithm
  std::map<std::string, std::string> knob_text;  // knob key -> the flag's text as typed
  std::string config_path;

  // `tuned_knobs`: false for `tune`, which chooses conv and every knob itself (its
  // `-list` flags: cli/TuneCommand.cpp) and so must not offer --conv, the knob flags or
  // --config.
  void add_to(CLI::App& command, bool tuned_knobs = true);
  // SessionOptions with the text flags parsed and the config file applied; throws
  // Error(usage) naming a bad value and its flag, Error(input) naming a bad config file.
  SessionOptions resolve() const;

 private:
  // Set by add_to: which options the user gave explicitly (they beat --config).
  CLI::Option* model_option_ = nullptr;
  CLI::Option* batch_option_ = nullptr;
  CLI::Option* conv_option_ = nullptr;
  std::map<std::string, CLI::Option*> knob_options_;
};

// Adds every knob's flag to `command`, storing what is typed in `text` (key -> text);
// boolean knobs are flags (`--async-update`). Returns the options by key.
std::map<std::string, CLI::Option*> add_knob_flags(CLI::App& command,
                                                   std::map<std::string, std::string>& text);

}  // namespace tunescope::cli
