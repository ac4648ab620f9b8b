// The order in which the members of interleaved rounds take their turns
// (docs/TUNER-MEASUREMENT.md, "The order of the turns"). Beside a one-thread member's
// turn, which leaves the machine's other CPUs idle, an unbound pool's threads woken for
// the next turn can share one CPU for more than one step, so a two-thread member whose
// threads the OS places ran at its one-thread twin's speed in most rounds that followed
// one. Members take their turns by thread count, the bound before the unbound of the
// same count: an unbound pool then follows a member that kept as many CPUs busy.
#pragma once

#include <cstddef>
#include <vector>

#include "core/engine/RunConfig.h"

namespace tunescope::tuner {

// Indices into `configs` in turn order: by thread count (0, one per hardware thread,
// counts as the machine's), then bound (cpu_binding=cores) before unbound; stable, so
// members alike keep the order given.
std::vector<size_t> turn_order(const std::vector<RunConfig>& configs);

// The order the rounds run their turns in: turn_order's where `ordered`
// (MeasureOptions::order_turns), else the order `configs` are given in.
std::vector<size_t> rounds_turns(const std::vector<RunConfig>& configs, bool ordered);

}  // namespace tunescope::tuner
