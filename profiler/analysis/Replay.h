// What-if replay: the step times a trace would have with other activity durations,
// by re-running its dependency graph.
//
// Each node starts a latency after the last of its predecessors is released in the
// replay (scheduling, wake-up, launch latency, host time between steps); a node without
// predecessors keeps its start. The latency is the one it had after its binding
// predecessor (the one released last), or with Latency::typical the median of those of
// its lane's nodes bound by the same kind of edge: on a loaded machine a recorded
// latency carries the preemptions of that one run. With recorded latencies, replaying
// the recorded durations gives the trace back.
#pragma once

#include <cstdint>
#include <vector>

#include "profiler/analysis/DependencyGraph.h"

namespace tunescope::profiler::analysis {

struct Replay {
  std::vector<int64_t> start_ns, end_ns;  // per node
};

enum class Latency { recorded, typical };

// `durations_ns` per node (graph.size() of them, each >= 0).
Replay replay(const DependencyGraph& graph, const std::vector<int64_t>& durations_ns,
              Latency latency = Latency::recorded);

// The recorded durations, the starting point of a what-if.
std::vector<int64_t> recorded_durations(const DependencyGraph& graph);

}  // namespace tunescope::profiler::analysis
