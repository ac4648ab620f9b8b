// Trace files by format: one entry point that reads any supported trace (tunescope or
// Kineto/PyTorch Chrome JSON, plain or gzip; Nsight Systems SQLite) and one that writes
// a named format, shared by `tunescope export`, `tunescope report` and the GUI.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "profiler/ChromeTraceReader.h"
#include "profiler/Trace.h"
#include "profiler/TraceWriter.h"

namespace tunescope::profiler {

enum class TraceFormat { chrome, kineto, nsys_sqlite };

// "chrome", "kineto", "nsys-sqlite".
std::string to_string(TraceFormat format);
// Throws std::invalid_argument listing the known names.
TraceFormat parse_trace_format(const std::string& name);
std::vector<std::string> trace_format_names();

std::unique_ptr<TraceWriter> make_trace_writer(TraceFormat format);

// The input format is found from the content (sniff_file): SQLite is read as an nsys
// export (a results DB is refused as not a trace), anything else as Chrome JSON (ours,
// Kineto's or PyTorch's legacy list, plain or gzip).
// Options apply to Chrome JSON as documented there; an SQLite export honours `cancel`
// before and after its read. Throws std::runtime_error naming the file and the problem
// (TraceReadCancelled when cancelled).
Trace read_trace_file(const std::filesystem::path& path, const TraceReadOptions& options = {});

}  // namespace tunescope::profiler
