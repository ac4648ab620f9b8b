#include "cli/TraceFileCommands.h"

#include <stdexcept>

#include "core/base/Error.h"

namespace tunescope::cli {

profiler::Trace read_trace_argument(const std::filesystem::path& path) {
  try {
    return profiler::read_trace_file(path);
  } catch (const std::runtime_error& e) {
    fail(ErrorKind::input, e.what());
  }
}

void write_trace_argument(const profiler::Trace& trace, profiler::TraceFormat format,
                          const std::filesystem::path& path, const std::string& option) {
  try {
    profiler::make_trace_writer(format)->write(trace, path);
  } catch (const std::runtime_error& e) {
    fail(ErrorKind::input, option, ": ", e.what());
  }
}

}  // namespace tunescope::cli
