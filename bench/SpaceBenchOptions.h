// The command-line options the tuner's space benchmarks share (bench_step_prediction,
// bench_tuning_truth): the model, the space (layouts, algorithms, thread counts) and
// the interleaved measurement's delta and time cap. Each program parses its own flags
// beside these.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "core/base/Error.h"
#include "core/engine/TrainingSession.h"

namespace tunescope::bench {

// "a,b,c" -> {"a", "b", "c"}.
inline std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

struct SpaceBenchOptions {
  SessionOptions base;
  std::string layouts = "nchw,nhwc", algorithms, threads;
  double delta = 0.02, max_seconds = 60;

  SpaceBenchOptions() { base.data = "fake"; }

  // Takes `key value` when it is one of the shared options; false for any other key.
  bool take(const std::string& key, const std::string& value) {
    if (key == "--model")
      base.model = value;
    else if (key == "--batch")
      base.batch = std::stoll(value);
    else if (key == "--data")
      base.data = value;
    else if (key == "--layouts")
      layouts = value;
    else if (key == "--algorithms")
      algorithms = value;
    else if (key == "--threads")
      threads = value;
    else if (key == "--delta")
      delta = std::stod(value);
    else if (key == "--max-seconds")
      max_seconds = std::stod(value);
    else if (key == "--prefetch")
      base.prefetch = std::stoi(value);
    else
      return false;
    return true;
  }

  // Throws Error(usage) naming the bounds when delta, the time cap or the batch is out.
  void check() const {
    if (!(delta > 0 && delta <= 1) || !(max_seconds > 0 && max_seconds <= 3600) || base.batch < 1 ||
        base.batch > 65536 || base.prefetch < 0 || base.prefetch > 64)
      fail(ErrorKind::usage,
           "--delta in (0, 1], --max-seconds in (0, 3600], --batch 1..65536, --prefetch 0..64");
  }
};

}  // namespace tunescope::bench
