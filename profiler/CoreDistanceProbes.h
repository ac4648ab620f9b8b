// How far apart the host had two CPUs while something ran: the cache-line round trip
// between them when it started and when it ended (core/base/CoreDistance.h measures it).
// On a VM the host sometimes runs the two vCPUs on cores far apart for seconds, and a
// two-thread step is then up to a third slower (docs/BENCHMARKS.md, "Two threads on vCPUs
// the host placed far apart"). A tune reports its probes; a profile keeps them in its
// trace's metadata, so `analyze` can tell that two traces were taken in different states.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "profiler/Trace.h"

namespace tunescope::profiler {

struct CoreDistanceWatch {
  int cpu_a = 0;
  int cpu_b = 0;
  double start_ns = 0;
  double end_ns = 0;  // 0: not probed yet
  // One probe took kCoresMovedRatio times the other or more.
  bool moved() const;
  // "a cache line went from CPU 0 to CPU 1 and back in 190 ns when the tune started and
  // 330 ns when it ended", and what a move means for the `what` ("tune", "run").
  std::string describe(const std::string& what) const;
  // "61-80 ns": its probes, lowest to highest.
  std::string range_text() const;
};
// Probes this far apart are of two states (near: 110-270 ns, far: 440-605 ns on the
// 2-vCPU VMs).
inline constexpr double kCoresMovedRatio = 1.8;

// Trace metadata: "CPU_A CPU_B START_NS END_NS" ("0 1 183 190"). Absent: the run used one
// thread, or this process could use one CPU.
inline constexpr const char* kCoreDistanceKey = "core_distance_ns";
std::string core_distance_to_text(const CoreDistanceWatch& watch);
// nullopt for text not in that form (or with a probe <= 0).
std::optional<CoreDistanceWatch> core_distance_from_text(const std::string& text);
// {"cpus": [a, b], "start_ns", "end_ns", "moved"}: the watch in `tune --progress jsonl`'s
// done event and `analyze --json`.
nlohmann::json core_distance_to_json(const CoreDistanceWatch& watch);
// The trace's watch, from its metadata (nullopt when it has none or it does not parse).
std::optional<CoreDistanceWatch> core_distance_of(const Trace& trace);

// Whether two watches of the same two CPUs saw them in different states: their slowest
// probe took kCoresMovedRatio times their fastest or more. A prediction from one run's
// trace for another's crosses the host's move then.
bool different_core_states(const CoreDistanceWatch& a, const CoreDistanceWatch& b);

}  // namespace tunescope::profiler
