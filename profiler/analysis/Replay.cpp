#include "profiler/analysis/Replay.h"

#include <algorithm>
#include <climits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace tunescope::profiler::analysis {

std::vector<int64_t> recorded_durations(const DependencyGraph& graph) {
  std::vector<int64_t> durations(graph.size());
  for (size_t n = 0; n < graph.size(); ++n) durations[n] = graph.duration_ns(n);
  return durations;
}

namespace {

// The binding predecessor's edge kind (lane for a root).
EdgeKind binding_kind(const DependencyGraph& graph, size_t n) {
  int64_t release = INT64_MIN;
  EdgeKind kind = EdgeKind::lane;
  for (const Edge& e : graph.predecessors[n])
    if (graph.release_ns(e) > release) release = graph.release_ns(e), kind = e.kind;
  return kind;
}

}  // namespace

std::vector<int64_t> recorded_latencies(const DependencyGraph& graph) {
  std::vector<int64_t> out(graph.size(), 0);
  for (size_t n = 0; n < graph.size(); ++n) {
    int64_t release = INT64_MIN;
    for (const Edge& e : graph.predecessors[n]) release = std::max(release, graph.release_ns(e));
    if (release != INT64_MIN) out[n] = graph.start_ns[n] - release;
  }
  return out;
}

std::vector<int64_t> typical_latencies(const DependencyGraph& graph,
                                       const std::vector<size_t>& classes) {
  if (classes.size() != graph.size())
    throw std::invalid_argument("typical_latencies: " + std::to_string(classes.size()) +
                                " classes for " + std::to_string(graph.size()) + " nodes");
  std::vector<int64_t> latencies = recorded_latencies(graph);
  std::map<std::pair<size_t, EdgeKind>, std::vector<int64_t>> members;
  for (size_t n = 0; n < graph.size(); ++n)
    if (!graph.predecessors[n].empty())
      members[{classes[n], binding_kind(graph, n)}].push_back(latencies[n]);
  std::map<std::pair<size_t, EdgeKind>, int64_t> median;
  for (auto& [key, gaps] : members) {
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2),
                     gaps.end());
    median[key] = gaps[gaps.size() / 2];
  }
  for (size_t n = 0; n < graph.size(); ++n)
    if (!graph.predecessors[n].empty()) latencies[n] = median[{classes[n], binding_kind(graph, n)}];
  return latencies;
}

std::vector<int64_t> typical_durations(const std::vector<int64_t>& durations_ns,
                                       const std::vector<size_t>& classes) {
  if (classes.size() != durations_ns.size())
    throw std::invalid_argument("typical_durations: " + std::to_string(classes.size()) +
                                " classes for " + std::to_string(durations_ns.size()) + " nodes");
  std::map<size_t, std::vector<int64_t>> members;
  for (size_t n = 0; n < classes.size(); ++n) members[classes[n]].push_back(durations_ns[n]);
  std::map<size_t, int64_t> median;
  for (auto& [c, values] : members) {
    std::nth_element(values.begin(),
                     values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
    median[c] = values[values.size() / 2];
  }
  std::vector<int64_t> out(durations_ns.size());
  for (size_t n = 0; n < classes.size(); ++n) out[n] = median[classes[n]];
  return out;
}

Replay replay(const DependencyGraph& graph, const std::vector<int64_t>& durations_ns,
              const std::vector<int64_t>* latencies_ns) {
  if (durations_ns.size() != graph.size() || (latencies_ns && latencies_ns->size() != graph.size()))
    throw std::invalid_argument("replay: " + std::to_string(durations_ns.size()) +
                                " durations for " + std::to_string(graph.size()) + " nodes");
  const std::vector<int64_t> recorded =
      latencies_ns ? std::vector<int64_t>{} : recorded_latencies(graph);
  const std::vector<int64_t>& latencies = latencies_ns ? *latencies_ns : recorded;
  Replay out;
  out.start_ns.resize(graph.size());
  out.end_ns.resize(graph.size());
  // Edges lead from lower to higher node indices: index order is a topological order.
  for (size_t n = 0; n < graph.size(); ++n) {
    const auto& predecessors = graph.predecessors[n];
    if (predecessors.empty()) {
      out.start_ns[n] = graph.start_ns[n];
    } else {
      int64_t replayed_release = INT64_MIN;
      for (const Edge& e : predecessors)
        replayed_release =
            std::max(replayed_release,
                     e.kind == EdgeKind::launch ? out.start_ns[e.from] : out.end_ns[e.from]);
      out.start_ns[n] = replayed_release + latencies[n];
    }
    out.end_ns[n] = out.start_ns[n] + std::max<int64_t>(durations_ns[n], 0);
  }
  return out;
}

}  // namespace tunescope::profiler::analysis
