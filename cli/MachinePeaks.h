// The machine's measured peaks as the CLI shows them: measured by the backend's probe
// (Backend::measure_peaks), cached in a results DB (ResultsDb::machine_peaks), and the
// roofline section of `profile` and `report` read against them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "profiler/Roofline.h"
#include "profiler/Trace.h"

namespace tunescope::cli {

inline constexpr double kDefaultProbeSeconds = 3;

// The peak a trace's kernels are held against, or why there is none.
struct PeakLookup {
  std::optional<profiler::MachinePeak> peak;
  std::string why_not_measured;
  std::string source;  // where the peak came from: "results DB <file>"
};

// The cached peak of `cpu` on `threads` threads in the results DB `db_path` (read
// only); `db_path` empty: none, with the reason.
PeakLookup cached_peak(const std::string& db_path, const std::string& cpu, int threads);

// The peak of the CPU and kernel threads a tunescope trace names in its metadata, cached
// in `db_path` (empty: none, with the reason; a trace naming neither: none, saying so).
PeakLookup trace_peak(const profiler::TraceMetadata& metadata, const std::string& db_path);

// The cached figures of this machine on `threads` threads, measuring them first (and
// caching them) when the DB has none or `remeasure`; `db_path` empty: measured, not
// cached. Prints a line while it measures.
std::vector<profiler::MachinePeak> local_peaks(const std::string& backend,
                                               const std::string& db_path, int threads,
                                               double seconds, bool remeasure);

// The report header's machine line: the peak and where it came from, or why there is none.
std::string machine_peak_line(const PeakLookup& lookup);
// Each conv layer's passes with their effective GFLOP/s, against the peak when there is
// one (a line saying why not, for a trace without conv-layer metadata).
std::string conv_roofline_section(const profiler::Trace& trace, const PeakLookup& lookup);

}  // namespace tunescope::cli
