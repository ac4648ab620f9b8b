// How far apart two CPUs are, measured: the time one cache line takes to go from a thread
// on one to a thread on the other and back. On a VM the host moves the vCPUs between
// physical cores over seconds, sometimes onto cores of another core complex where that
// round trip takes three times as long, and a two-thread step, whose threads read what the
// other wrote, slows with it (docs/BENCHMARKS.md, "Two threads on vCPUs the host placed far
// apart"). Nothing in the guest says where the vCPUs are; this probe shows it.
#pragma once

#include <optional>

#include "profiler/CoreDistanceProbes.h"

namespace tunescope {

// Bounces one cache line `round_trips` times between two threads bound to `cpu_a` and
// `cpu_b` (spinning; about 4-12 ms at 20000 on the 2-vCPU VMs) and returns the mean round
// trip in nanoseconds. Throws Error(usage) for round_trips outside 1..10^7 and
// Error(runtime) when the OS refuses a binding.
double cache_line_round_trip_ns(int cpu_a, int cpu_b, int round_trips = 20000);

// The watch's probes: 2000 round trips, 0.3-1.2 ms on the 2-vCPU VMs.
inline constexpr int kCoreDistanceRoundTrips = 2000;
// The start of a watch of the first two CPUs this process may use, for something that runs
// `threads` threads: nullopt when it runs one, or this process may use one CPU (nothing
// shares a cache line then).
std::optional<profiler::CoreDistanceWatch> start_core_distance_watch(int threads);
// Its end: probes again into watch->end_ns (nothing when there is no watch).
void end_core_distance_watch(std::optional<profiler::CoreDistanceWatch>& watch);

}  // namespace tunescope
