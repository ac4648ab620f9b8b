#include "cli/TopFinding.h"

#include <cstdio>
#include <stdexcept>

#include "profiler/analysis/StepAnalysis.h"

namespace tunescope::cli {

std::string finding_gain_text(const profiler::analysis::Finding& f, int64_t step_ns) {
  char text[96];
  std::snprintf(
      text, sizeof text, "gain: %s%.3f ms (%.1f %%)", f.gain_is_bound ? "up to " : "",
      static_cast<double>(f.gain_ns) / 1e6,
      step_ns > 0 ? 100.0 * static_cast<double>(f.gain_ns) / static_cast<double>(step_ns) : 0.0);
  return text;
}

std::string top_finding_line(const profiler::Trace& trace,
                             const std::optional<profiler::MachinePeak>& peak) {
  namespace an = profiler::analysis;
  if (trace.activities.empty()) return "top finding: none (the trace holds no activities)";
  const an::TraceAnalysis analysis = an::analyze(trace);
  if (analysis.graph.lanes > 1 && analysis.graph.cross_lane_edges() == 0)
    return "top finding: none (the trace records no dependencies between its lanes)";
  const auto findings = an::find_findings(trace, analysis, peak);
  if (findings.empty()) return "top finding: none above 1 % of the step";
  const an::Finding& f = findings.front();
  return "top finding: [" + f.rule + "] " + f.summary + "; " +
         finding_gain_text(f, analysis.recorded.median_step_ns) + "; try: " + f.suggestion;
}

}  // namespace tunescope::cli
