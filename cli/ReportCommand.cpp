// `tunescope report`: the kernel table, lane utilisation and concurrency of any trace
// tunescope reads (its own, PyTorch profiler traces, Nsight Systems SQLite exports).
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "cli/Commands.h"
#include "cli/TraceFileCommands.h"
#include "core/base/Error.h"
#include "profiler/MetricsReport.h"
#include "profiler/TraceFiles.h"

namespace tunescope::cli {

namespace {
struct ReportFlags {
  std::string input;
  size_t top = 25;
  double gap_us = 0;
};
}  // namespace

Action add_report_command(CLI::App& command) {
  auto flags = std::make_shared<ReportFlags>();
  command.add_option("trace", flags->input,
                     "Trace to read: tunescope or PyTorch-profiler JSON (.json/.json.gz), nsys SQLite")
      ->required();
  command.add_option("--top", flags->top, "Rows of the kernel table (0: all)")->capture_default_str();
  command.add_option("--gaps-us", flags->gap_us, "List idle gaps longer than this (microseconds; 0: none)")
      ->check(CLI::NonNegativeNumber);

  return [flags] {
    const profiler::Trace trace = read_trace_argument(flags->input);
    const profiler::TraceMetadata& m = trace.metadata;
    std::printf("trace: %s\n", flags->input.c_str());
    if (!m.machine.empty()) std::printf("machine: %s\n", m.machine.c_str());
    if (!m.backend.empty()) std::printf("backend: %s\n", m.backend.c_str());
    for (const auto& [key, value] : m.extra) std::printf("%s: %s\n", key.c_str(), value.c_str());
    std::printf("\n");

    profiler::SummaryOptions options;
    options.top_n = flags->top;
    options.gap_threshold_ns = static_cast<int64_t>(flags->gap_us * 1000);
    std::printf("%s", profiler::format_summary(profiler::summarize(trace, options)).c_str());
  };
}

}  // namespace tunescope::cli
