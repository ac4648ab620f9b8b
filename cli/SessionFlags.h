// The command-line options shared by `train`, `profile` and `tune`, bound to SessionOptions.
// `--config FILE` loads a tuned RunConfig; flags given explicitly on the command line
// override the file's values (so a tuned config can be tried at another batch size).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "core/engine/TrainingSession.h"

namespace tunescope::cli {

struct SessionFlags {
  SessionOptions options;
  std::string layout = "nchw";
  std::string conv;  // empty: the backend's default algorithm
  std::string fft_workspace = "reuse";
  std::string fft_tile = "auto";
  std::string update_on = "device";
  std::string config_path;

  // `tuned_knobs`: false for `tune`, which chooses layout, conv, threads and the
  // concurrency knobs itself and so must not offer --layout, --conv, --threads,
  // --streams, --replicas, --micro-batches, --async-update, --threads-per-lane,
  // --update-on, --fft-workspace, --fft-tile or --config.
  void add_to(CLI::App& command, bool tuned_knobs = true);
  // SessionOptions with the text flags parsed and the config file applied; throws
  // Error(usage) naming a bad value, Error(input) naming a bad config file.
  SessionOptions resolve() const;

 private:
  // Set by add_to: which options the user gave explicitly (they beat --config).
  CLI::Option* model_option_ = nullptr;
  CLI::Option* batch_option_ = nullptr;
  CLI::Option* layout_option_ = nullptr;
  CLI::Option* conv_option_ = nullptr;
  CLI::Option* threads_option_ = nullptr;
  CLI::Option* streams_option_ = nullptr;
  CLI::Option* replicas_option_ = nullptr;
  CLI::Option* micro_option_ = nullptr;
  CLI::Option* async_option_ = nullptr;
  CLI::Option* lane_threads_option_ = nullptr;
  CLI::Option* update_on_option_ = nullptr;
  CLI::Option* fft_workspace_option_ = nullptr;
  CLI::Option* fft_tile_option_ = nullptr;
};

}  // namespace tunescope::cli
