// Reading and writing trace files from a command: the profiler's readers and writers
// report a bad file as std::runtime_error naming it; on the command line that is an
// input error (exit code 2), so it becomes tunescope::Error(input).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "profiler/Trace.h"
#include "profiler/TraceFiles.h"

namespace tunescope::cli {

// Any supported trace (tunescope/PyTorch Chrome JSON, Nsight SQLite), format detected.
profiler::Trace read_trace_argument(const std::filesystem::path& path);
// Writes `trace` as `format`; `option` names the flag that chose the path (e.g. "-o").
void write_trace_argument(const profiler::Trace& trace, profiler::TraceFormat format,
                          const std::filesystem::path& path, const std::string& option);
// One trace of the ranks' own traces (profiler::merge_rank_traces) written to `output` as
// `format`, with each rank's clock offset printed: `merge-traces`, and rank 0 at the end
// of an MPI profile (cli/MergeTracesCommand.cpp).
void merge_trace_arguments(const std::vector<std::string>& inputs, const std::string& output,
                           const std::string& format);

}  // namespace tunescope::cli
