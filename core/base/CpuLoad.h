// How busy the CPUs this process may use are, and how much of that is this process: the
// tuner's measure of what other processes take of a shared machine (SharedMachine.h).
#pragma once

#include <string_view>
#include <vector>

namespace tunescope {

// CPU time of a set of CPUs since boot, in seconds summed over them: busy (every state
// but idle and iowait; steal counts as busy: the hypervisor gave the time to another
// guest) and in all.
struct CpuTimes {
  double busy_seconds = 0;
  double total_seconds = 0;
};

// The CPU times of `cpus` in a /proc/stat text (its "cpuN" lines, in USER_HZ ticks of
// `ticks_per_second`). Throws Error(runtime) naming /proc/stat when a CPU's line is
// missing or malformed.
CpuTimes parse_proc_stat(std::string_view text, const std::vector<int>& cpus,
                         double ticks_per_second);
// The same read from /proc/stat now.
CpuTimes cpu_times(const std::vector<int>& cpus);

// CPU time this process has used, all its threads together (CLOCK_PROCESS_CPUTIME_ID).
double process_cpu_seconds();

}  // namespace tunescope
