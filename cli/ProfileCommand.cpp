// `tunescope profile`: warms up, then times K training steps with the tracer on,
// prints the kernel table, lane utilisation and concurrency, and writes the trace.
#include <cstdio>
#include <map>
#include <memory>

#include "cli/Commands.h"
#include "cli/SessionFlags.h"
#include "cli/TraceFileCommands.h"
#include "cli/TrainingProgress.h"
#include "core/base/Error.h"
#include "profiler/MetricsReport.h"

namespace tunescope::cli {

namespace {
struct ProfileFlags {
  SessionFlags session;
  int64_t warmup = 3;
  int64_t steps = 10;
  size_t top = 25;
  std::string trace_path;
};
}  // namespace

Action add_profile_command(CLI::App& command) {
  auto flags = std::make_shared<ProfileFlags>();
  flags->session.add_to(command);
  command.add_option("--warmup", flags->warmup, "Untimed steps before tracing")->capture_default_str();
  command.add_option("--steps", flags->steps, "Traced training steps")->capture_default_str();
  command.add_option("--top", flags->top, "Rows of the kernel table (0: all)")->capture_default_str();
  command.add_option("--trace", flags->trace_path,
                     "Write the trace as Chrome/Perfetto JSON (.json, or .json.gz compressed)");

  return [flags] {
    if (flags->warmup < 0) fail(ErrorKind::usage, "--warmup must be >= 0, got ", flags->warmup);
    if (flags->steps < 1) fail(ErrorKind::usage, "--steps must be >= 1, got ", flags->steps);
    TrainingSession session(flags->session.resolve());
    std::printf("tunescope profile: %s\n", session.description().c_str());
    std::fflush(stdout);
    const int64_t batch = session.options().batch;
    if (flags->warmup > 0) {
      ProgressBar bar("warm-up", flags->warmup);
      session.train_steps(flags->warmup, training_progress(bar, batch));
      bar.finish("");
    }

    profiler::Tracer& tracer = session.tracer();
    EpochResult timed;
    tracer.start();
    {
      profiler::RangeScope run(&tracer, "profile", profiler::RangeCategory::run);
      ProgressBar bar("traced", flags->steps);
      timed = session.train_steps(flags->steps, training_progress(bar, batch));
      bar.finish("");
    }
    tracer.stop();
    std::map<std::string, std::string> extra = session.conv_memory_metadata();
    extra["model"] = session.options().model;
    profiler::TraceMetadata metadata{session.backend().device_description(), session.backend().name(),
                                     session.config_json(), std::move(extra)};
    const profiler::Trace trace = tracer.collect(metadata);

    profiler::SummaryOptions summary_options;
    summary_options.top_n = flags->top;
    std::printf("\n%lld traced steps: %.3f s, %.1f ex/s, %.2f ms/step (input wait %.3f s)\n\n",
                static_cast<long long>(flags->steps), timed.seconds, timed.examples_per_second,
                1000 * timed.seconds / static_cast<double>(flags->steps),
                std::chrono::duration<double>(timed.data_wait).count());
    std::printf("%s\n\n", session.conv_memory_line().c_str());
    std::printf("%s", profiler::format_summary(profiler::summarize(trace, summary_options)).c_str());
    if (!flags->trace_path.empty()) {
      write_trace_argument(trace, profiler::TraceFormat::chrome, flags->trace_path, "--trace");
      std::printf("\ntrace: %s (%zu activities, %zu ranges; open in https://ui.perfetto.dev)\n",
                  flags->trace_path.c_str(), trace.activities.size(), trace.ranges.size());
    }
  };
}

}  // namespace tunescope::cli
