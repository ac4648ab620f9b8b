#include "profiler/analysis/DependencyGraph.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

namespace tunescope::profiler::analysis {

const char* to_string(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::lane: return "lane";
    case EdgeKind::event: return "event";
    case EdgeKind::host: return "host";
    case EdgeKind::launch: return "launch";
    case EdgeKind::core: return "core";
  }
  return "lane";
}

namespace {

using LaneKey = std::pair<int, int>;  // (device, stream)

EdgeKind edge_kind_of(FlowKind kind) {
  switch (kind) {
    case FlowKind::event: return EdgeKind::event;
    case FlowKind::host: return EdgeKind::host;
    case FlowKind::launch: return EdgeKind::launch;
  }
  return EdgeKind::event;
}

}  // namespace

DependencyGraph build_dependency_graph(const Trace& trace) {
  DependencyGraph graph;
  // Nodes: activities not inside the one before them on their lane. Lanes run one
  // activity at a time, so a lane's nodes are ordered by start and by end alike.
  std::map<LaneKey, std::vector<size_t>> lane_nodes;
  std::map<LaneKey, size_t> lane_index;
  for (size_t i = 0; i < trace.activities.size(); ++i) {
    const Activity& a = trace.activities[i];
    auto& nodes = lane_nodes[{a.device, a.stream}];
    // Sorted by start, longer first: inside the lane's last node means nested in it.
    if (!nodes.empty() && a.end_ns <= graph.end_ns[nodes.back()]) continue;
    const size_t node = graph.activity.size();
    graph.activity.push_back(i);
    graph.start_ns.push_back(a.start_ns);
    graph.end_ns.push_back(a.end_ns);
    if (nodes.empty()) lane_index[{a.device, a.stream}] = lane_index.size();
    graph.lane.push_back(lane_index[{a.device, a.stream}]);
    graph.predecessors.emplace_back();
    if (!nodes.empty()) graph.predecessors[node].push_back({nodes.back(), EdgeKind::lane});
    nodes.push_back(node);
  }
  graph.lanes = lane_nodes.size();

  const auto add = [&](size_t from, size_t to, EdgeKind kind) {
    if (from >= to) return false;  // not earlier: a clock skew or a binding error
    for (const Edge& e : graph.predecessors[to])
      if (e.from == from) return true;  // lane order already says it
    graph.predecessors[to].push_back({from, kind});
    return true;
  };

  for (const Flow& flow : trace.flows) {
    const auto from_lane = lane_nodes.find({flow.from.device, flow.from.stream});
    const auto to_lane = lane_nodes.find({flow.to.device, flow.to.stream});
    bool bound = false;
    if (from_lane != lane_nodes.end() && to_lane != lane_nodes.end()) {
      const auto& sources = from_lane->second;
      const auto& targets = to_lane->second;
      // The last node ending at or before the source point, the first starting at or after the
      // target point.
      const auto source =
          std::upper_bound(sources.begin(), sources.end(), flow.from.ns,
                           [&](int64_t ns, size_t n) { return ns < graph.end_ns[n]; });
      const auto target =
          std::lower_bound(targets.begin(), targets.end(), flow.to.ns,
                           [&](size_t n, int64_t ns) { return graph.start_ns[n] < ns; });
      if (source != sources.begin() && target != targets.end())
        bound = add(*std::prev(source), *target, edge_kind_of(flow.kind));
    }
    ++(bound ? graph.flows_bound : graph.flows_unbound);
  }

  // Launch correlations: a host API call (overhead) and the device work it launched.
  std::vector<size_t> node_of(trace.activities.size(), SIZE_MAX);
  for (size_t n = 0; n < graph.size(); ++n) node_of[graph.activity[n]] = n;
  std::unordered_map<uint64_t, size_t> launch_of;
  for (size_t n = 0; n < graph.size(); ++n) {
    const Activity& a = trace.activities[graph.activity[n]];
    if (a.kind == ActivityKind::overhead && a.correlation != 0) launch_of.emplace(a.correlation, n);
  }
  for (size_t n = 0; n < graph.size(); ++n) {
    const Activity& a = trace.activities[graph.activity[n]];
    if (a.kind == ActivityKind::overhead || a.correlation == 0) continue;
    const auto launch = launch_of.find(a.correlation);
    if (launch != launch_of.end() && add(launch->second, n, EdgeKind::launch)) ++graph.launch_edges;
  }
  return graph;
}

}  // namespace tunescope::profiler::analysis
