#include "core/tuner/SharedMachine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "core/base/CpuAffinity.h"
#include "core/base/CpuLoad.h"
#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"

namespace tunescope::tuner {

double ForeignLoad::free_cores() const {
  if (!shared()) return static_cast<double>(cores);
  return std::max(1.0, static_cast<double>(cores) - other_cores);
}

bool ForeignLoad::shared() const { return other_cores >= kNegligibleOtherCores; }

std::string ForeignLoad::describe() const {
  const auto two_places = [](double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", value);
    return std::string(text);
  };
  const std::string taken =
      cat("other processes used ", two_places(other_cores), " of ", cores,
          " cores while the tuner idled (", std::lround(watch_seconds * 1000), " ms)");
  if (!shared()) return cat(taken, ": a quiet machine, steps are not charged");
  return cat(taken, ": each timed step is charged for the CPU it used beyond the ",
             two_places(free_cores()), " cores left free");
}

ForeignLoad watch_foreign_load(double seconds) {
  const std::vector<int> cpus = allowed_cpus();
  const CpuTimes before = cpu_times(cpus);
  const double own_before = process_cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const CpuTimes after = cpu_times(cpus);
  const double own = process_cpu_seconds() - own_before;
  const double watched =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ForeignLoad load;
  load.cores = static_cast<int>(cpus.size());
  load.watch_seconds = watched;
  // The ticks' own span (not the sleep's) is the denominator: /proc/stat counts whole
  // ticks, and their total over the allowed CPUs is cores x the span they cover.
  const double span =
      (after.total_seconds - before.total_seconds) / std::max<size_t>(cpus.size(), 1);
  const double busy = after.busy_seconds - before.busy_seconds - own;
  if (span > 0) load.other_cores = std::clamp(busy / span, 0.0, static_cast<double>(cpus.size()));
  return load;
}

double free_cores_charged(const RunConfig& config, double free_cores) {
  return knobs::cpu_binding.get(config.knobs) == CpuBinding::cores ? 0 : free_cores;
}

double charged_step_seconds(double wall_seconds, double cpu_seconds, double free_cores) {
  if (free_cores <= 0 || cpu_seconds < 0 || wall_seconds <= 0) return wall_seconds;
  const double cores_used = cpu_seconds / wall_seconds;
  return wall_seconds * std::max(1.0, cores_used / free_cores);
}

}  // namespace tunescope::tuner
