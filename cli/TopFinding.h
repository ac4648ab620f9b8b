// One line with a trace's top finding (profiler/analysis/Findings.h), for commands that
// end with a trace of their own (tune's winner) rather than an analyze report.
#pragma once

#include <optional>
#include <string>

#include "profiler/Roofline.h"
#include "profiler/Trace.h"
#include "profiler/analysis/Findings.h"

namespace tunescope::cli {

// "gain: [up to ]X ms (Y %)" of a finding on a step of `step_ns`.
std::string finding_gain_text(const profiler::analysis::Finding& finding, int64_t step_ns);

// "top finding: [rule] summary; gain: ...; try: ...", or a line saying why there is
// none (no dependencies recorded, nothing above 1 % of the step).
std::string top_finding_line(const profiler::Trace& trace,
                             const std::optional<profiler::MachinePeak>& peak);

}  // namespace tunescope::cli
