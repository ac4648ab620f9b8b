// `tunescope merge-traces OUT IN.rank0 IN.rank1 ...`: one trace of all ranks of an MPI
// run, on rank 0's clock (profiler::merge_rank_traces); rank 0 of the run calls the same
// function.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/Commands.h"
#include "cli/TraceFileCommands.h"
#include "core/base/Error.h"
#include "profiler/MetricsReport.h"
#include "profiler/RankMerge.h"
#include "profiler/TraceFiles.h"

namespace tunescope::cli {

namespace {
struct MergeFlags {
  std::string output;
  std::vector<std::string> inputs;
  std::string format = "chrome";
};
}  // namespace

void merge_trace_arguments(const std::vector<std::string>& input_paths, const std::string& output,
                           const std::string& format) {
  std::vector<profiler::RankInput> inputs;
  for (const std::string& input : input_paths)
    inputs.push_back({input, read_trace_argument(input)});
  profiler::Trace merged;
  try {
    merged = profiler::merge_rank_traces(std::move(inputs));
  } catch (const profiler::RankMergeError& e) {
    fail(ErrorKind::input, e.what());
  }
  write_trace_argument(merged, profiler::parse_trace_format(format), output, "output");
  const auto missing = merged.metadata.extra.find(profiler::kMissingRanksKey);
  if (missing != merged.metadata.extra.end())
    std::fprintf(stderr, "tunescope: warning: ranks %s of world_size %s are missing\n",
                 missing->second.c_str(),
                 merged.metadata.extra.at(profiler::kWorldSizeKey).c_str());
  std::printf("%zu ranks, %zu activities, %zu ranges -> %s (%s)\n", input_paths.size(),
              merged.activities.size(), merged.ranges.size(), output.c_str(), format.c_str());
  std::fputs(profiler::format_rank_clocks(profiler::rank_clocks(merged.metadata)).c_str(), stdout);
}

Action add_merge_traces_command(CLI::App& command) {
  auto flags = std::make_shared<MergeFlags>();
  command
      .add_option("output", flags->output,
                  "Merged trace to write (.gz compresses the JSON formats)")
      ->required();
  command
      .add_option("inputs", flags->inputs,
                  "The ranks' own traces (any format tunescope reads), each naming its rank, "
                  "world_size and clock offset in its metadata")
      ->required();
  command.add_option("--format", flags->format, "Output format")
      ->check(CLI::IsMember(profiler::trace_format_names()));

  return [flags] { merge_trace_arguments(flags->inputs, flags->output, flags->format); };
}

}  // namespace tunescope::cli
