// The command-line options shared by `train` and `profile`, bound to SessionOptions.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "core/engine/TrainingSession.h"

namespace tunescope::cli {

struct SessionFlags {
  SessionOptions options;
  std::string layout = "nchw";
  std::string conv = "direct";

  void add_to(CLI::App& command);
  // SessionOptions with the text flags parsed; throws Error(usage) naming a bad value.
  SessionOptions resolve() const;
};

}  // namespace tunescope::cli
