// Reading and writing trace files from a command: the profiler's readers and writers
// report a bad file as std::runtime_error naming it; on the command line that is an
// input error (exit code 2), so it becomes tunescope::Error(input).
#pragma once

#include <filesystem>
#include <string>

#include "profiler/Trace.h"
#include "profiler/TraceFiles.h"

namespace tunescope::cli {

// Any supported trace (tunescope/PyTorch Chrome JSON, Nsight SQLite), format detected.
profiler::Trace read_trace_argument(const std::filesystem::path& path);
// Writes `trace` as `format`; `option` names the flag that chose the path (e.g. "-o").
void write_trace_argument(const profiler::Trace& trace, profiler::TraceFormat format,
                          const std::filesystem::path& path, const std::string& option);

}  // namespace tunescope::cli
