// The dependency graph of a trace, for the critical path and what-if replay: nodes are
// activities, edges say which finished before which could start.
//
// Edges come from four places: the order of a lane (each activity after the previous
// one on its device and stream), the trace's flows (the executor's event and host
// waits, bound to the activities around their ends, see profiler::Flow), launch
// correlations (a host overhead activity and the device work sharing its nonzero
// correlation id: CUPTI, nsys and PyTorch Kineto traces), and the waits for a core
// another lane held, which no flow records (CoreSharing.h). An activity nested in
// another of its lane runs inside it and is not a node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "profiler/Trace.h"

namespace tunescope::profiler::analysis {

// core: inferred, not recorded (CoreSharing.h).
enum class EdgeKind { lane, event, host, launch, core };
const char* to_string(EdgeKind kind);

struct Edge {
  size_t from = 0;  // node index, always below the node the edge leads to
  EdgeKind kind = EdgeKind::lane;
};

struct DependencyGraph {
  // Per node, in start order: the activity it stands for, its times, its predecessors.
  std::vector<size_t> activity;  // index into Trace::activities
  std::vector<int64_t> start_ns, end_ns;
  std::vector<size_t> lane;  // dense lane index (one per device and stream)
  std::vector<std::vector<Edge>> predecessors;
  size_t flows_bound = 0;    // trace flows that became edges
  size_t flows_unbound = 0;  // flows with no activity at an end, or backwards in time
  size_t launch_edges = 0;
  size_t core_edges = 0;  // inferred waits for a core another lane held (analyze() adds them)
  size_t lanes = 0;       // distinct (device, stream) among the nodes

  size_t size() const { return activity.size(); }
  int64_t duration_ns(size_t node) const { return end_ns[node] - start_ns[node]; }
  // When `edge`'s source lets its target start: its end, or for a launch its start
  // (a kernel may start before the API call that launched it returns).
  int64_t release_ns(const Edge& edge) const {
    return edge.kind == EdgeKind::launch ? start_ns[edge.from] : end_ns[edge.from];
  }
  // The recorded edges besides lane order (flows and launches): none on a multi-lane
  // trace means the trace cannot tell what waited for what.
  size_t cross_lane_edges() const { return flows_bound + launch_edges; }
};

// `trace` must be sorted (sort_by_start), as readers and Tracer::collect leave it.
DependencyGraph build_dependency_graph(const Trace& trace);

}  // namespace tunescope::profiler::analysis
