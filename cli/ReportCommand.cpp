// `tunescope report`: the kernel table, lane utilisation and concurrency of any trace
// tunescope reads (its own, PyTorch profiler traces, Nsight Systems SQLite exports), or
// the ranking of every tune in a tunescope results DB.
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "cli/Commands.h"
#include "cli/MachinePeaks.h"
#include "cli/RankingTable.h"
#include "cli/TraceFileCommands.h"
#include "core/base/Error.h"
#include "core/tuner/StoredTune.h"
#include "profiler/FileKind.h"
#include "profiler/MetricsReport.h"
#include "profiler/TraceFiles.h"

namespace tunescope::cli {

namespace {
struct ReportFlags {
  std::string input;
  size_t top = 25;
  double gap_us = 0;
  std::string db_path;
};

// Each (machine, problem) of the DB: the ranked table the end of its tune printed.
// Read-only: a report changes nothing and leaves no -wal/-shm files beside the DB.
void report_results_db(const std::string& path) {
  const tuner::ResultsDb db(path, tuner::ResultsDb::Access::read_only);
  const auto tunes = db.tuned_pairs();
  std::printf("results DB: %s (%zu tuned problem%s)\n", path.c_str(), tunes.size(),
              tunes.size() == 1 ? "" : "s");
  for (const auto& [machine_id, problem_id] : tunes) {
    const tuner::TuneReport report = tuner::stored_tune(db, machine_id, problem_id);
    const tuner::ProblemKey& p = report.problem;
    std::printf("\n%s, input %s, batch %lld on %s: %zu configs\n", p.model.c_str(),
                p.input_shape.c_str(), static_cast<long long>(p.batch),
                report.machine.str().c_str(), report.trials.size());
    if (const auto& choice = report.strategy_choice)
      std::printf("strategy: %s (%s)\n", tuner::to_string(choice->run).c_str(),
                  choice->reason.c_str());
    print_ranking(report);
    if (const tuner::TrialResult* best = report.best_trial())
      std::printf("\nbest: %s, %.1f ex/s (%s)\n", best->config.label().c_str(),
                  best->figures.median_eps, report.decision.c_str());
    else
      std::printf("\nno best: %s\n", report.decision.c_str());
  }
}

}  // namespace

Action add_report_command(CLI::App& command) {
  auto flags = std::make_shared<ReportFlags>();
  command
      .add_option(
          "trace", flags->input,
          "Trace to read: tunescope or PyTorch-profiler JSON (.json/.json.gz), nsys SQLite; or a "
          "tunescope results DB (tune --db) to reprint the ranking of its tunes")
      ->required();
  command.add_option("--top", flags->top, "Rows of the kernel table (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command
      .add_option("--gaps-us", flags->gap_us,
                  "List idle gaps longer than this (microseconds; 0: none)")
      ->check(CLI::NonNegativeNumber);
  command.add_option(
      "--db", flags->db_path,
      "Results DB whose cached machine peak (tunescope machine) the conv kernels are held against");

  return [flags] {
    const profiler::FileKind kind = profiler::sniff_file(flags->input);
    if (kind == profiler::FileKind::results_db) return report_results_db(flags->input);
    const profiler::Trace trace = [&] {
      try {
        return read_trace_argument(flags->input);
      } catch (const Error& e) {
        // An SQLite file here is either an nsys export or a results DB: say it is neither.
        if (e.kind() == ErrorKind::input && kind == profiler::FileKind::other_sqlite)
          fail(ErrorKind::input, e.what(),
               "; nor a tunescope results DB (no tunescope application_id)");
        throw;
      }
    }();
    const profiler::TraceMetadata& m = trace.metadata;
    std::printf("trace: %s\n", flags->input.c_str());
    if (!m.machine.empty()) std::printf("machine: %s\n", m.machine.c_str());
    if (!m.backend.empty()) std::printf("backend: %s\n", m.backend.c_str());
    for (const auto& [key, value] : m.extra)
      if (key != profiler::kConvLayersKey) std::printf("%s: %s\n", key.c_str(), value.c_str());
    const PeakLookup peak = trace_peak(m, flags->db_path);
    std::printf("%s\n", machine_peak_line(peak).c_str());

    profiler::SummaryOptions options;
    options.top_n = flags->top;
    options.gap_threshold_ns = static_cast<int64_t>(flags->gap_us * 1000);
    std::printf("%s", profiler::format_summary(profiler::summarize(trace, options)).c_str());
    std::printf("%s", conv_roofline_section(trace, peak).c_str());
  };
}

}  // namespace tunescope::cli
