// `tunescope export`: converts a trace between formats — tunescope or Kineto/PyTorch
// Chrome JSON, Nsight Systems SQLite in, any of chrome | kineto | nsys-sqlite out.
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "cli/Commands.h"
#include "cli/TraceFileCommands.h"
#include "core/base/Error.h"
#include "profiler/TraceFiles.h"

namespace tunescope::cli {

namespace {
struct ExportFlags {
  std::string input;
  std::string format;
  std::string output;
};
}  // namespace

Action add_export_command(CLI::App& command) {
  auto flags = std::make_shared<ExportFlags>();
  command
      .add_option("trace", flags->input,
                  "Trace to read: tunescope or PyTorch-profiler JSON (.json/.json.gz), nsys SQLite")
      ->required();
  command.add_option("--format", flags->format, "Output format")
      ->required()
      ->check(CLI::IsMember(profiler::trace_format_names()));
  command
      .add_option("-o,--output", flags->output, "File to write (.gz compresses the JSON formats)")
      ->required();

  return [flags] {
    const profiler::Trace trace = read_trace_argument(flags->input);
    write_trace_argument(trace, profiler::parse_trace_format(flags->format), flags->output, "-o");
    std::printf("%s: %zu activities, %zu ranges -> %s (%s)\n", flags->input.c_str(),
                trace.activities.size(), trace.ranges.size(), flags->output.c_str(),
                flags->format.c_str());
  };
}

}  // namespace tunescope::cli
