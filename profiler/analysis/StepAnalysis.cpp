#include "profiler/analysis/StepAnalysis.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include "profiler/analysis/CoreSharing.h"
#include "profiler/analysis/WhatIf.h"

namespace tunescope::profiler::analysis {

namespace {

PathSummary summarise(const Trace& trace, const DependencyGraph& graph,
                      const std::vector<Step>& steps, const Timing& timing,
                      const std::vector<Window>& windows) {
  PathSummary out;
  std::vector<CriticalPath> paths;
  for (size_t s = 0; s < steps.size(); ++s) {
    paths.push_back(
        critical_path(graph, trace, timing, steps[s], windows[s].start_ns, windows[s].end_ns));
    out.step_ns.push_back(windows[s].end_ns - windows[s].start_ns);
    for (size_t b = 0; b < kBoundCount; ++b) out.bound_ns[b] += paths.back().bound_ns[b];
  }
  if (steps.empty()) return out;
  std::vector<size_t> order(steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return out.step_ns[a] < out.step_ns[b]; });
  out.median_step = order[order.size() / 2];
  out.median_step_ns = out.step_ns[out.median_step];
  out.median_path = std::move(paths[out.median_step]);
  return out;
}

}  // namespace

TraceAnalysis analyze(const Trace& trace, CoreWaits core_waits) {
  if (trace.activities.empty()) throw std::invalid_argument("the trace has no activities");
  TraceAnalysis out;
  out.graph = build_dependency_graph(trace);
  out.steps = find_steps(trace, out.graph);
  if (core_waits == CoreWaits::inferred) {
    const CoreWaitsFound waits = add_core_edges(out.graph, trace, out.steps);
    out.one_core_steps = waits.one_core_steps;
    out.bound_apart_steps = waits.bound_apart_steps;
  }
  std::vector<Window> windows;
  for (const Step& s : out.steps) windows.push_back({s.start_ns, s.end_ns});
  out.recorded =
      summarise(trace, out.graph, out.steps, Timing{out.graph.start_ns, out.graph.end_ns}, windows);
  std::map<std::pair<int, int>, LaneIdle> lanes;
  for (const Step& step : out.steps)
    for (const LaneIdle& l : idle_breakdown(out.graph, trace, step)) {
      LaneIdle& sum = lanes[{l.device, l.stream}];
      sum.device = l.device, sum.stream = l.stream;
      sum.busy_ns += l.busy_ns, sum.host_wait_ns += l.host_wait_ns;
      sum.kernel_wait_ns += l.kernel_wait_ns, sum.other_ns += l.other_ns;
    }
  for (const auto& [key, lane] : lanes) out.idle.push_back(lane);
  return out;
}

namespace {

// The same work in every step: one class per (lane, activity name, layer).
std::vector<size_t> work_classes(const Trace& trace, const DependencyGraph& graph) {
  const std::vector<WorkKey> keys = work_keys(trace, graph);
  std::map<std::tuple<size_t, std::string, std::string>, size_t> class_of;
  std::vector<size_t> classes(graph.size());
  for (size_t n = 0; n < graph.size(); ++n) {
    const auto key =
        std::tuple{graph.lane[n], trace.activities[graph.activity[n]].name, keys[n].layer};
    classes[n] = class_of.emplace(key, class_of.size()).first->second;
  }
  return classes;
}

}  // namespace

Prediction predict(const Trace& trace, const TraceAnalysis& analysis,
                   const std::vector<int64_t>& durations_ns, Latency latency, Durations durations) {
  std::vector<size_t> classes;
  if (latency == Latency::typical || durations == Durations::typical)
    classes = work_classes(trace, analysis.graph);
  std::vector<int64_t> latencies;
  if (latency == Latency::typical) latencies = typical_latencies(analysis.graph, classes);
  const auto run = [&](const std::vector<int64_t>& given) {
    const std::vector<int64_t> chosen =
        durations == Durations::typical ? typical_durations(given, classes) : given;
    const Replay r = replay(analysis.graph, chosen, latencies.empty() ? nullptr : &latencies);
    return summarise(trace, analysis.graph, analysis.steps, Timing{r.start_ns, r.end_ns},
                     replayed_windows(analysis.steps, analysis.graph, r.end_ns));
  };
  return {run(durations_ns), run(recorded_durations(analysis.graph))};
}

}  // namespace tunescope::profiler::analysis
