// Validation and naming of the concurrency knobs.
#include "core/engine/Concurrency.h"

#include <algorithm>

#include "core/base/Error.h"

namespace tunescope {

const char* to_string(UpdateOn where) { return where == UpdateOn::host ? "host" : "device"; }

std::optional<UpdateOn> parse_update_on(std::string_view text) {
  if (text == "device") return UpdateOn::device;
  if (text == "host") return UpdateOn::host;
  return std::nullopt;
}

int Concurrency::lane_threads(int threads) const {
  return threads_per_lane > 0 ? threads_per_lane : std::max(1, threads / lanes());
}

void Concurrency::validate(int64_t batch) const {
  // The config file's keys (RunKnobs.cpp declares them), as every core message names
  // them; a front end adds its own flag (cli/FlagNames.h).
  auto at_least = [](int64_t value, int64_t minimum, const char* key) {
    if (value < minimum) fail(ErrorKind::usage, key, " must be >= ", minimum, ", got ", value);
  };
  at_least(streams, 1, "streams");
  at_least(replicas, 1, "replicas");
  at_least(micro_batches, 1, "micro_batches");
  at_least(threads_per_lane, 0, "threads_per_lane");
  const int64_t parts = static_cast<int64_t>(replicas) * micro_batches;
  if (batch % parts != 0)
    fail(ErrorKind::usage, "batch ", batch, " does not split into ", replicas, " replica",
         replicas == 1 ? "" : "s", " x ", micro_batches, " micro-batch",
         micro_batches == 1 ? "" : "es", " (", parts, " equal parts): choose a batch divisible by ",
         parts);
}

std::string Concurrency::label() const {
  std::string out;
  if (streams != 1) out += cat(" streams=", streams);
  if (async_update) out += " async";
  if (replicas != 1) out += cat(" replicas=", replicas);
  if (micro_batches != 1) out += cat(" micro=", micro_batches);
  if (threads_per_lane != 0) out += cat(" threads/lane=", threads_per_lane);
  if (update_on != UpdateOn::device) out += cat(" update=", to_string(update_on));
  return out;
}

}  // namespace tunescope
