// `tunescope profile`: warms up, then times K training steps with the tracer on,
// prints the kernel table, lane utilisation and concurrency, and writes the trace.
#include <cstdio>
#include <map>
#include <memory>
#include <optional>

#include "cli/Commands.h"
#include "cli/MachinePeaks.h"
#include "cli/SessionFlags.h"
#include "cli/TraceFileCommands.h"
#include "cli/TrainingProgress.h"
#include "core/base/CoreDistance.h"
#include "core/base/Error.h"
#include "core/base/HostCpu.h"
#include "core/base/Ranks.h"
#include "core/engine/RunConfig.h"
#include "profiler/CoreDistanceProbes.h"
#include "profiler/MetricsReport.h"
#include "profiler/RankMerge.h"

namespace tunescope::cli {

namespace {
struct ProfileFlags {
  SessionFlags session;
  int64_t warmup = 3;
  int64_t steps = 10;
  size_t top = 25;
  std::string trace_path;
  std::string db_path;
};

// The peak this run's conv kernels are held against: with --db the cached one, measured
// and cached first when the DB has none for this CPU and the threads of a lane.
// After every rank has written its own trace, rank 0 merges them into `trace_path`.
void merge_rank_files(Communicator& ranks, const std::string& trace_path) {
  float written = 1;
  ranks.allreduce_sum(std::span<float>(&written, 1));  // a barrier: every file is complete
  if (ranks.rank() != 0) return;
  std::vector<std::string> paths;
  for (int r = 0; r < ranks.size(); ++r)
    paths.push_back(profiler::rank_trace_path(trace_path, r).string());
  std::printf("merged: ");
  merge_trace_arguments(paths, trace_path, "chrome");
}

PeakLookup run_peak(TrainingSession& session, const std::string& db_path) {
  const int threads = session.options().concurrency().lane_threads(session.options().threads());
  if (db_path.empty()) return cached_peak(db_path, "", threads);
  if (session.backend().name() != "cpu")
    return {std::nullopt,
            "the machine probe measures the CPU; this run is on " + session.backend().name(), ""};
  local_peaks(session.backend().name(), db_path, threads, kDefaultProbeSeconds, false);
  return cached_peak(db_path, host_cpu_model(), threads);
}
}  // namespace

Action add_profile_command(CLI::App& command) {
  auto flags = std::make_shared<ProfileFlags>();
  flags->session.add_to(command);
  command.add_option("--warmup", flags->warmup, "Untimed steps before tracing")
      ->capture_default_str();
  command.add_option("--steps", flags->steps, "Traced training steps")->capture_default_str();
  command.add_option("--top", flags->top, "Rows of the kernel table (0: all)")
      ->capture_default_str();
  command.add_option("--trace", flags->trace_path,
                     "Write the trace as Chrome/Perfetto JSON (.json, or .json.gz compressed)");
  command.add_option(
      "--db", flags->db_path,
      "Results DB (created if missing) caching the machine's measured peak, which the conv "
      "kernels are held against; measured once when it has none");

  return [flags] {
    if (flags->warmup < 0) fail(ErrorKind::usage, "--warmup must be >= 0, got ", flags->warmup);
    if (flags->steps < 1) fail(ErrorKind::usage, "--steps must be >= 1, got ", flags->steps);
    SessionOptions options = flags->session.resolve();
    options.ranks = world_communicator();  // mpirun -np N: this rank's share of each batch
    TrainingSession session(options);
    std::printf("tunescope profile: %s\n", session.description().c_str());
    std::fflush(stdout);
    const PeakLookup peak = run_peak(session, flags->db_path);
    std::printf("%s", machine_peak_line(peak).c_str());
    std::fflush(stdout);
    const int64_t batch = session.options().batch;
    if (flags->warmup > 0) {
      ProgressBar bar("warm-up", flags->warmup);
      session.train_steps(flags->warmup, training_progress(bar, batch));
      bar.finish("");
    }

    profiler::Tracer& tracer = session.tracer();
    EpochResult timed;
    // Where the host had the CPUs when the traced steps started and ended: a trace taken
    // with them far apart is of another machine state (profiler/CoreDistanceProbes.h).
    std::optional<profiler::CoreDistanceWatch> cores =
        start_core_distance_watch(threads_or_hardware(session.options().threads()));
    tracer.start();
    {
      profiler::RangeScope run(&tracer, "profile", profiler::RangeCategory::run);
      ProgressBar bar("traced", flags->steps);
      timed = session.train_steps(flags->steps, training_progress(bar, batch));
      bar.finish("");
    }
    tracer.stop();
    end_core_distance_watch(cores);
    std::map<std::string, std::string> extra = session.trace_metadata_extra();
    if (cores) extra[profiler::kCoreDistanceKey] = profiler::core_distance_to_text(*cores);
    extra.merge(session.rank_trace_metadata());  // collective: every rank measures its clock here
    profiler::TraceMetadata metadata{session.backend().device_description(),
                                     session.backend().name(), session.config_json(),
                                     std::move(extra)};
    const profiler::Trace trace = tracer.collect(metadata);

    profiler::SummaryOptions summary_options;
    summary_options.top_n = flags->top;
    std::printf("\n%lld traced steps: %.3f s, %.1f ex/s, %.2f ms/step (input wait %.3f s)\n\n",
                static_cast<long long>(flags->steps), timed.seconds, timed.examples_per_second,
                1000 * timed.seconds / static_cast<double>(flags->steps),
                std::chrono::duration<double>(timed.data_wait).count());
    if (cores) std::printf("cores: %s\n", cores->describe("run").c_str());
    std::printf("%s\n\n", session.conv_memory_line().c_str());
    std::printf("%s",
                profiler::format_summary(profiler::summarize(trace, summary_options)).c_str());
    std::printf("%s", conv_roofline_section(trace, peak).c_str());
    if (!flags->trace_path.empty()) {
      const int ranks = session.options().rank_count();
      // Of several ranks each writes its own (run.json -> run.rank0.json, run.rank1.json...)
      // and rank 0 merges them into the path given, on its clock.
      const std::string path =
          ranks > 1 ? profiler::rank_trace_path(flags->trace_path, options.ranks->rank()).string()
                    : flags->trace_path;
      write_trace_argument(trace, profiler::TraceFormat::chrome, path, "--trace");
      std::printf("\ntrace: %s (%zu activities, %zu ranges; open in https://ui.perfetto.dev)\n",
                  path.c_str(), trace.activities.size(), trace.ranges.size());
      if (ranks > 1) merge_rank_files(*options.ranks, flags->trace_path);
    }
  };
}

}  // namespace tunescope::cli
