// One call for what `tunescope analyze` and the GUI show: the dependency graph, the
// steps, their critical paths summed and the median step's, the lanes' idle time, and
// a what-if replay against the recorded times.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/Trace.h"
#include "profiler/analysis/CriticalPath.h"
#include "profiler/analysis/DependencyGraph.h"
#include "profiler/analysis/Replay.h"

namespace tunescope::profiler::analysis {

struct PathSummary {
  int64_t median_step_ns = 0;
  std::vector<int64_t> step_ns;                 // per step, in order
  std::array<int64_t, kBoundCount> bound_ns{};  // summed over the steps
  size_t median_step = 0;                       // index of the median step
  CriticalPath median_path;                     // the median step's critical path
};

struct TraceAnalysis {
  DependencyGraph graph;
  std::vector<Step> steps;
  PathSummary recorded;
  std::vector<LaneIdle> idle;    // per lane, summed over the steps
  size_t one_core_steps = 0;     // steps whose lanes shared one core (CoreSharing.h)
  size_t bound_apart_steps = 0;  // steps whose lanes had CPUs of their own (CoreSharing.h)
};

// Whether the graph gets the waits for a core another lane held (CoreSharing.h), which
// the trace shows but does not record; `none` keeps the recorded edges alone.
enum class CoreWaits { inferred, none };
// Throws std::invalid_argument when the trace has no activities.
TraceAnalysis analyze(const Trace& trace, CoreWaits core_waits = CoreWaits::inferred);

// The steps and critical paths under other node durations (Replay.h). `replay_check`
// replays the recorded durations: how far the model alone is from the recording.
struct Prediction {
  PathSummary predicted;
  PathSummary replay_check;
};
// Latencies: each as recorded, or typical: the median over the same activity (name,
// layer, lane) in every step for the same kind of binding edge.
enum class Latency { recorded, typical };
// Durations: each node's as given, or typical: the median of the given ones over the
// same activity in every step (one typical step, without one step's preemptions).
enum class Durations { as_given, typical };
Prediction predict(const Trace& trace, const TraceAnalysis& analysis,
                   const std::vector<int64_t>& durations_ns, Latency latency = Latency::recorded,
                   Durations durations = Durations::as_given);

}  // namespace tunescope::profiler::analysis
