// The turn order of interleaved rounds (TurnOrder.h).
#include "core/tuner/TurnOrder.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "core/engine/RunKnobs.h"

namespace tunescope::tuner {

std::vector<size_t> turn_order(const std::vector<RunConfig>& configs) {
  const auto key = [&](size_t i) {
    const int threads = threads_or_hardware(configs[i].threads());
    const bool unbound = knobs::cpu_binding.get(configs[i].knobs) != CpuBinding::cores;
    return std::make_tuple(threads, unbound);
  };
  std::vector<size_t> order(configs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  return order;
}

std::vector<size_t> rounds_turns(const std::vector<RunConfig>& configs, bool ordered) {
  if (ordered) return turn_order(configs);
  std::vector<size_t> given(configs.size());
  std::iota(given.begin(), given.end(), size_t{0});
  return given;
}

}  // namespace tunescope::tuner
