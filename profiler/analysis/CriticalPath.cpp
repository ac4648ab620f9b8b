#include "profiler/analysis/CriticalPath.h"

#include <algorithm>
#include <climits>
#include <map>

#include "profiler/Metrics.h"

namespace tunescope::profiler::analysis {

const char* to_string(Bound bound) {
  switch (bound) {
    case Bound::compute: return "compute";
    case Bound::copies: return "copies";
    case Bound::synchronisation: return "synchronisation";
    case Bound::launch_overhead: return "launch/host overhead";
    case Bound::data_wait: return "data/input wait";
    case Bound::idle: return "idle";
    case Bound::communication: return "communication";
  }
  return "idle";
}

namespace {

Bound bound_of(const Activity& a) {
  if (a.kind == ActivityKind::kernel && is_communication(a.name)) return Bound::communication;
  switch (a.kind) {
    case ActivityKind::kernel: return Bound::compute;
    case ActivityKind::memcpy:
    case ActivityKind::memset: return Bound::copies;
    case ActivityKind::sync: return Bound::synchronisation;
    case ActivityKind::overhead: return Bound::launch_overhead;
  }
  return Bound::compute;
}

Bound gap_bound(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::lane: return Bound::idle;
    case EdgeKind::event: return Bound::synchronisation;
    case EdgeKind::host: return Bound::data_wait;
    case EdgeKind::launch: return Bound::launch_overhead;
    case EdgeKind::core: return Bound::idle;  // the hand-off of the core; its holder is on the path
  }
  return Bound::idle;
}

int64_t release(const Edge& e, const Timing& t) {
  return e.kind == EdgeKind::launch ? t.start_ns[e.from] : t.end_ns[e.from];
}

// The predecessor released last, or null.
const Edge* binding(const DependencyGraph& graph, const Timing& t, size_t node) {
  const Edge* best = nullptr;
  for (const Edge& e : graph.predecessors[node])
    if (!best || release(e, t) > release(*best, t)) best = &e;
  return best;
}

bool is_eval(const std::string& name) { return name.find("eval") != std::string::npos; }

}  // namespace

std::vector<Step> find_steps(const Trace& trace, const DependencyGraph& graph) {
  std::vector<Step> steps;
  for (const Range& r : trace.ranges)
    if (r.category == RangeCategory::iteration && !is_eval(r.name))
      steps.push_back({r.name, r.start_ns, r.end_ns, {}, SIZE_MAX});
  if (steps.empty() && graph.size() > 0) {
    const int64_t end = *std::max_element(graph.end_ns.begin(), graph.end_ns.end());
    steps.push_back({"trace", graph.start_ns.front(), end, {}, SIZE_MAX});
  }
  std::sort(steps.begin(), steps.end(),
            [](const Step& a, const Step& b) { return a.start_ns < b.start_ns; });
  // Nodes start in order: each step takes those starting in its window (a step's
  // window ends where the next begins, so that work spilling over, an asynchronous
  // update, stays with the step that submitted it).
  size_t n = 0;
  for (size_t s = 0; s < steps.size(); ++s) {
    Step& step = steps[s];
    while (n < graph.size() && graph.start_ns[n] < step.start_ns) ++n;
    const int64_t limit = s + 1 < steps.size() ? steps[s + 1].start_ns : INT64_MAX;
    for (; n < graph.size() && graph.start_ns[n] < limit; ++n) step.nodes.push_back(n);
    int64_t last_end = INT64_MIN, any_end = INT64_MIN;
    size_t any = SIZE_MAX;
    for (size_t node : step.nodes) {
      if (graph.end_ns[node] <= step.end_ns && graph.end_ns[node] > last_end) {
        last_end = graph.end_ns[node];
        step.anchor = node;
      }
      if (graph.end_ns[node] > any_end) any_end = graph.end_ns[node], any = node;
    }
    if (step.anchor == SIZE_MAX) step.anchor = any;
  }
  return steps;
}

CriticalPath critical_path(const DependencyGraph& graph, const Trace& trace, const Timing& t,
                           const Step& step, int64_t start_ns, int64_t end_ns) {
  CriticalPath path;
  path.start_ns = start_ns;
  path.end_ns = end_ns;
  if (step.anchor == SIZE_MAX) {
    path.bound_ns[static_cast<size_t>(Bound::idle)] = end_ns - start_ns;
    return path;
  }
  const auto add = [&](Bound b, int64_t ns) {
    path.bound_ns[static_cast<size_t>(b)] += std::max<int64_t>(ns, 0);
  };
  add(Bound::synchronisation, end_ns - t.end_ns[step.anchor]);  // the host's wait for the last lane
  size_t node = step.anchor;
  int64_t covered_end = t.end_ns[node];
  for (;;) {
    path.nodes.push_back(node);
    const Activity& a = trace.activities[graph.activity[node]];
    add(bound_of(a), std::min(covered_end, t.end_ns[node]) - t.start_ns[node]);
    const Edge* edge = binding(graph, t, node);
    if (!edge || t.start_ns[edge->from] < start_ns) {
      add(Bound::data_wait, t.start_ns[node] - start_ns);  // before the step's first node: the host
      break;
    }
    add(gap_bound(edge->kind), t.start_ns[node] - release(*edge, t));
    covered_end = release(*edge, t);
    node = edge->from;
  }
  std::reverse(path.nodes.begin(), path.nodes.end());
  return path;
}

std::vector<LaneIdle> idle_breakdown(const DependencyGraph& graph, const Trace& trace,
                                     const Step& step) {
  std::map<std::pair<int, int>, LaneIdle> lanes;
  std::map<std::pair<int, int>, int64_t> last_end;
  const Timing t{graph.start_ns, graph.end_ns};
  for (size_t node : step.nodes) {
    const Activity& a = trace.activities[graph.activity[node]];
    const std::pair<int, int> key{a.device, a.stream};
    LaneIdle& lane = lanes[key];
    lane.device = a.device;
    lane.stream = a.stream;
    const auto last = last_end.find(key);
    const int64_t from = last == last_end.end() ? step.start_ns : last->second;
    const int64_t gap = std::max<int64_t>(graph.start_ns[node] - from, 0);
    const Edge* edge = binding(graph, t, node);
    if (!edge || edge->kind == EdgeKind::host || edge->kind == EdgeKind::launch)
      lane.host_wait_ns += gap;
    else if (edge->kind == EdgeKind::event || edge->kind == EdgeKind::core)
      lane.kernel_wait_ns += gap;
    else
      lane.other_ns += gap;
    lane.busy_ns += graph.duration_ns(node);
    last_end[key] = std::max(from, graph.end_ns[node]);
  }
  std::vector<LaneIdle> out;
  for (const auto& [key, lane] : lanes) out.push_back(lane);
  return out;
}

std::vector<Window> replayed_windows(const std::vector<Step>& steps, const DependencyGraph& graph,
                                     const std::vector<int64_t>& replayed_end_ns) {
  std::vector<Window> windows;
  int64_t previous_shift = 0;
  for (const Step& step : steps) {
    const int64_t shift = step.anchor == SIZE_MAX
                              ? previous_shift
                              : replayed_end_ns[step.anchor] - graph.end_ns[step.anchor];
    windows.push_back({step.start_ns + previous_shift, step.end_ns + shift});
    previous_shift = shift;
  }
  return windows;
}

}  // namespace tunescope::profiler::analysis
