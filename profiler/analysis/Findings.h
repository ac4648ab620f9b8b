// Findings: rules in the spirit of Nsight Systems' expert system and HTA's analyses,
// each with its evidence, the step time it would save (estimated by replaying the
// dependency graph, or bounded by the critical path where the graph itself would
// change) and the knob or change that would get it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/Roofline.h"
#include "profiler/Trace.h"
#include "profiler/analysis/StepAnalysis.h"

namespace tunescope::profiler::analysis {

struct Finding {
  std::string rule;                                // short id, e.g. "layout-padding"
  std::string summary;                             // what was seen, in a sentence
  std::vector<std::string> evidence;               // activity names
  int64_t window_start_ns = 0, window_end_ns = 0;  // the median step
  int64_t gain_ns = 0;                             // estimated saving on the median step
  bool gain_is_bound =
      false;               // an upper bound (the change reshapes the graph) rather than a replay
  std::string suggestion;  // the knob or change
};

// A conv pass is far below the roofline under this share of what the roof allows at its
// intensity; its gain is replayed at kRooflineTarget of the roof (reachable by a good
// algorithm on our measurements: the per-layer winners run at 30-60 % of the FMA peak).
inline constexpr double kFarBelowRoofline = 0.25;
inline constexpr double kRooflineTarget = 0.5;

// Ranked by gain, largest first; rules whose gain is under 1 % of the median step are
// left out. `peak`: the machine's measured peak for the trace's CPU and threads (the
// roofline rule needs it and the trace's conv-layer metadata; without either it is skipped).
std::vector<Finding> find_findings(const Trace& trace, const TraceAnalysis& analysis,
                                   const std::optional<MachinePeak>& peak = std::nullopt);

}  // namespace tunescope::profiler::analysis
