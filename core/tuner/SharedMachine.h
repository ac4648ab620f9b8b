// Tuning on a machine other processes use too (docs/TUNER-MEASUREMENT.md, "A shared
// machine"). A candidate with more threads than the cores the others leave free takes CPU
// from them, and how much the OS scheduler lets it take drifts over seconds: under a
// one-core busy loop on two cores, a two-thread config's step swung between 5.5 and 10 ms
// in half-second windows as the loop's share went from 0.5 to 1 core. Interleaved rounds
// pair candidates within a round but not across those seconds, so a short tune that lands
// in a generous stretch crowns an oversubscribed config a long run does not confirm. So
// the tuner first watches what the others take while it idles, and charges every timed
// step (sweep, per-layer finds, rounds) for the CPU it used beyond the cores left free: a
// config is judged on what it does with the share it can count on.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/engine/RunConfig.h"

namespace tunescope::tuner {

// What the rest of the machine took of this process's CPUs while the tuner idled.
struct ForeignLoad {
  int cores = 0;           // CPUs this process may run on
  double other_cores = 0;  // their busy time over the watch, in cores (this process's own excluded)
  double watch_seconds = 0;  // how long it watched
  // The cores a candidate can count on: all of them when the others took less than
  // kNegligibleOtherCores (nothing is charged then), else cores - other_cores, at least 1.
  double free_cores() const;
  bool shared() const;  // the others took kNegligibleOtherCores or more
  std::string describe() const;
};
// Below this the machine counts as quiet: a daemon's wake-ups, the reader's own reads.
inline constexpr double kNegligibleOtherCores = 0.25;
// The watch: 25 scheduler ticks of 10 ms per core, so a quarter core of other work is
// about 6 ticks, well above the tick or two a read of /proc/stat can be off by.
inline constexpr double kForeignLoadWatchSeconds = 0.25;

// Sleeps `seconds` and reports what the machine's other processes used meanwhile
// (/proc/stat's busy time of the allowed CPUs minus this process's CPU time). Throws
// Error(runtime) when /proc/stat cannot be read.
ForeignLoad watch_foreign_load(double seconds = kForeignLoadWatchSeconds);

// The free cores a candidate's timed steps are charged against (charged_step_seconds):
// `free_cores` for a run the OS places, 0 (not charged) for one bound to CPUs
// (cpu_binding cores). Bound, each thread stays on its CPU and gets its fair share of it
// beside the other process: a share that does not drift over seconds as the OS's
// placement of unbound threads does, so its wall time is what a long run gets (under a
// one-core busy loop the bound two-thread lenet5 mix ran 1.15x the one-thread mix over the
// truth's 400 rounds, docs/BENCHMARKS.md, "Tuner accuracy and cost, session 18").
double free_cores_charged(const RunConfig& config, double free_cores);

// A step of `wall_seconds` that used `cpu_seconds` of this process's CPU, charged for
// the CPU beyond `free_cores`: wall * max(1, (cpu / wall) / free_cores). Unchanged when
// free_cores <= 0 (not charged) or the CPU time is unknown (negative).
double charged_step_seconds(double wall_seconds, double cpu_seconds, double free_cores);

}  // namespace tunescope::tuner
