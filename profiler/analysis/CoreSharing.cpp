#include "profiler/analysis/CoreSharing.h"

#include <algorithm>
#include <climits>
#include <map>
#include <utility>

#include "profiler/LaneCpus.h"

namespace tunescope::profiler::analysis {

bool shared_one_core(const DependencyGraph& graph, const std::vector<size_t>& device_kernels) {
  // Kernels in start order: their union is one sweep.
  std::map<size_t, int64_t> lane_busy;
  int64_t busy = 0, covered = 0, covered_until = INT64_MIN;
  for (size_t n : device_kernels) {
    busy += graph.duration_ns(n);
    lane_busy[graph.lane[n]] += graph.duration_ns(n);
    covered += std::max<int64_t>(0, graph.end_ns[n] - std::max(graph.start_ns[n], covered_until));
    covered_until = std::max(covered_until, graph.end_ns[n]);
  }
  if (lane_busy.size() < 2) return false;
  int64_t busiest = 0;
  for (const auto& [lane, ns] : lane_busy) busiest = std::max(busiest, ns);
  const int64_t concurrent = busy - covered, most = busy - busiest;
  return most > 0 && 4 * concurrent < most;
}

namespace {

bool is_kernel(const DependencyGraph& graph, const Trace& trace, size_t node) {
  return trace.activities[graph.activity[node]].kind == ActivityKind::kernel;
}

int64_t release_of(const DependencyGraph& graph, size_t node) {
  int64_t release = INT64_MIN;
  for (const Edge& e : graph.predecessors[node]) release = std::max(release, graph.release_ns(e));
  return release;
}

bool has_predecessor(const DependencyGraph& graph, size_t node, size_t from) {
  for (const Edge& e : graph.predecessors[node])
    if (e.from == from) return true;
  return false;
}

using Wait = std::pair<size_t, size_t>;  // (holder, waiter) nodes

// Whether every lane among `nodes` ran on CPUs of its own (lane_cpus: stream -> CPUs, from
// the trace's metadata): then none of them waited for another's core.
bool bound_apart(const DependencyGraph& graph, const Trace& trace,
                 const std::map<int, std::vector<int>>& lane_cpus,
                 const std::vector<size_t>& nodes) {
  if (lane_cpus.empty()) return false;
  std::map<int, int> owner;  // CPU -> stream
  std::map<int, bool> seen;  // streams checked
  for (size_t n : nodes) {
    const int stream = trace.activities[graph.activity[n]].stream;
    if (seen[stream]) continue;
    seen[stream] = true;
    const auto cpus = lane_cpus.find(stream);
    if (cpus == lane_cpus.end()) return false;
    for (int cpu : cpus->second)
      if (!owner.emplace(cpu, stream).second) return false;
  }
  return true;
}

// The waits a step whose device kept a core per lane shows one by one; `kernels` by start,
// `release` per node as recorded.
void find_single_waits(const DependencyGraph& graph, const std::vector<size_t>& kernels,
                       const std::vector<int64_t>& release, std::vector<Wait>& found) {
  std::vector<size_t> by_end = kernels;
  std::sort(by_end.begin(), by_end.end(), [&](size_t a, size_t b) {
    return std::pair{graph.end_ns[a], a} < std::pair{graph.end_ns[b], b};
  });
  for (size_t n : kernels) {
    if (release[n] == INT64_MIN) continue;  // a root keeps its start
    const int64_t start = graph.start_ns[n];
    const int64_t wait = start - release[n];
    if (wait <= 0) continue;
    auto it = std::upper_bound(by_end.begin(), by_end.end(), start,
                               [&](int64_t ns, size_t x) { return ns < graph.end_ns[x]; });
    while (it != by_end.begin()) {
      --it;
      if (graph.end_ns[*it] <= release[n]) break;
      if (graph.lane[*it] == graph.lane[n] || *it >= n) continue;
      if (2 * (start - graph.end_ns[*it]) < wait) found.emplace_back(*it, n);
      break;
    }
  }
}

}  // namespace

CoreWaitsFound add_core_edges(DependencyGraph& graph, const Trace& trace,
                              const std::vector<Step>& steps) {
  CoreWaitsFound out;
  // Read every release before adding an edge, so that one inferred wait never makes another.
  std::vector<int64_t> release(graph.size(), INT64_MIN);
  for (size_t n = 0; n < graph.size(); ++n)
    if (!graph.predecessors[n].empty()) release[n] = release_of(graph, n);
  std::vector<Wait> found;
  const auto metadata = trace.metadata.extra.find(kLaneCpusKey);
  const std::map<int, std::vector<int>> lane_cpus = metadata == trace.metadata.extra.end()
                                                        ? std::map<int, std::vector<int>>{}
                                                        : lane_cpus_from_text(metadata->second);
  for (const Step& step : steps) {
    bool one_core = false;
    std::map<int, std::vector<size_t>> kernels;  // per device, by start
    for (size_t n : step.nodes)
      if (is_kernel(graph, trace, n))
        kernels[trace.activities[graph.activity[n]].device].push_back(n);
    for (const auto& [device, nodes] : kernels) {
      if (bound_apart(graph, trace, lane_cpus, nodes)) {
        ++out.bound_apart_steps;
        continue;
      }
      if (!shared_one_core(graph, nodes)) {
        find_single_waits(graph, nodes, release, found);
        continue;
      }
      one_core = true;
      for (size_t i = 1; i < nodes.size(); ++i) {
        const size_t before = nodes[i - 1], n = nodes[i];
        if (graph.lane[before] != graph.lane[n] && graph.end_ns[before] <= graph.start_ns[n])
          found.emplace_back(before, n);
      }
    }
    if (one_core) ++out.one_core_steps;
  }
  for (const auto& [holder, waiter] : found) {
    if (has_predecessor(graph, waiter, holder)) continue;
    graph.predecessors[waiter].push_back({holder, EdgeKind::core});
    ++out.edges;
  }
  graph.core_edges = out.edges;
  return out;
}

}  // namespace tunescope::profiler::analysis
