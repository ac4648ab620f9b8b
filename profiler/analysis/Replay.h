// What-if replay: the step times a trace would have with other activity durations,
// by re-running its dependency graph.
//
// Each node starts a latency after the last of its predecessors is released in the
// replay (scheduling, wake-up, launch latency, host time between steps); a node without
// predecessors keeps its start. The latency is by default the one it had after its
// binding predecessor (the one released last); with recorded latencies, replaying the
// recorded durations gives the trace back. typical_latencies gives instead the median
// over the nodes of one class (the same work of each step): on a loaded machine a
// recorded latency carries the preemptions of that one run.
#pragma once

#include <cstdint>
#include <vector>

#include "profiler/analysis/DependencyGraph.h"

namespace tunescope::profiler::analysis {

struct Replay {
  std::vector<int64_t> start_ns, end_ns;  // per node
};

// Per node: how long after its binding predecessor's release it started (0 for roots).
std::vector<int64_t> recorded_latencies(const DependencyGraph& graph);
// Per node: the median recorded latency of the nodes sharing its class and the kind of
// its binding edge; `classes` per node (e.g. its lane, name and layer: the same work in
// every step).
std::vector<int64_t> typical_latencies(const DependencyGraph& graph,
                                       const std::vector<size_t>& classes);

// Per node: the median of `durations_ns` over the nodes sharing its class (the same
// work in every step): a replay of one typical step instead of each step as it ran.
std::vector<int64_t> typical_durations(const std::vector<int64_t>& durations_ns,
                                       const std::vector<size_t>& classes);

// `durations_ns` per node (graph.size() of them, each >= 0); `latencies_ns` per node,
// recorded_latencies when null.
Replay replay(const DependencyGraph& graph, const std::vector<int64_t>& durations_ns,
              const std::vector<int64_t>* latencies_ns = nullptr);

// The recorded durations, the starting point of a what-if.
std::vector<int64_t> recorded_durations(const DependencyGraph& graph);

}  // namespace tunescope::profiler::analysis
