#include "profiler/analysis/Replay.h"

#include <algorithm>
#include <climits>
#include <map>
#include <utility>
#include <stdexcept>
#include <string>

namespace tunescope::profiler::analysis {

std::vector<int64_t> recorded_durations(const DependencyGraph& graph) {
  std::vector<int64_t> durations(graph.size());
  for (size_t n = 0; n < graph.size(); ++n) durations[n] = graph.duration_ns(n);
  return durations;
}

namespace {

// Per node: its recorded latency after its binding predecessor and that edge's kind.
struct Latencies {
  std::vector<int64_t> gap_ns;
  std::vector<EdgeKind> kind;
};

Latencies recorded_latencies(const DependencyGraph& graph) {
  Latencies out{std::vector<int64_t>(graph.size(), 0), std::vector<EdgeKind>(graph.size(), EdgeKind::lane)};
  for (size_t n = 0; n < graph.size(); ++n) {
    int64_t release = INT64_MIN;
    for (const Edge& e : graph.predecessors[n])
      if (graph.release_ns(e) > release) release = graph.release_ns(e), out.kind[n] = e.kind;
    if (release != INT64_MIN) out.gap_ns[n] = graph.start_ns[n] - release;
  }
  return out;
}

// Each node's latency replaced by the median of its lane's for the same edge kind.
void make_typical(const DependencyGraph& graph, Latencies& latencies) {
  std::map<std::pair<size_t, EdgeKind>, std::vector<int64_t>> classes;
  for (size_t n = 0; n < graph.size(); ++n)
    if (!graph.predecessors[n].empty()) classes[{graph.lane[n], latencies.kind[n]}].push_back(latencies.gap_ns[n]);
  std::map<std::pair<size_t, EdgeKind>, int64_t> median;
  for (auto& [key, gaps] : classes) {
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
    median[key] = gaps[gaps.size() / 2];
  }
  for (size_t n = 0; n < graph.size(); ++n)
    if (!graph.predecessors[n].empty()) latencies.gap_ns[n] = median[{graph.lane[n], latencies.kind[n]}];
}

}  // namespace

Replay replay(const DependencyGraph& graph, const std::vector<int64_t>& durations_ns, Latency latency) {
  if (durations_ns.size() != graph.size())
    throw std::invalid_argument("replay: " + std::to_string(durations_ns.size()) + " durations for " +
                                std::to_string(graph.size()) + " nodes");
  Latencies latencies = recorded_latencies(graph);
  if (latency == Latency::typical) make_typical(graph, latencies);
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
            std::max(replayed_release, e.kind == EdgeKind::launch ? out.start_ns[e.from] : out.end_ns[e.from]);
      out.start_ns[n] = replayed_release + latencies.gap_ns[n];
    }
    out.end_ns[n] = out.start_ns[n] + std::max<int64_t>(durations_ns[n], 0);
  }
  return out;
}

}  // namespace tunescope::profiler::analysis
