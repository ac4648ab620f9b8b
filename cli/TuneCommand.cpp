// `tunescope tune`: measures the candidates of a strategy over layout x threads x conv
// algorithm x concurrency knobs, records every trial in the results DB, prints the
// ranking, writes the tuned config and the Chrome traces of the winner and the
// baseline (nchw + direct).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>

#include "cli/Commands.h"
#include "cli/SessionFlags.h"
#include "cli/TrainingProgress.h"
#include "core/base/Error.h"
#include "core/tuner/Tuner.h"
#include "profiler/ChromeTraceWriter.h"

namespace tunescope::cli {

namespace {

struct TuneFlags {
  SessionFlags session;
  std::vector<std::string> layouts{"nchw", "nhwc"};
  std::vector<std::string> algorithms;
  std::vector<int> threads{1};
  std::vector<int> streams{1};
  std::vector<int> replicas{1};
  std::vector<int> micro_batches{1};
  std::vector<std::string> async_update{"off"};
  std::vector<int> threads_per_lane{0};
  std::string strategy = "exhaustive";
  bool per_layer_product = false;
  int64_t steps = 5;
  int64_t warmup = 2;
  double budget = 0;
  std::string db_path;
  std::string out_path;
  std::string trace_dir;
};

std::string trial_note(const tuner::TrialResult& trial) {
  if (trial.status != tuner::TrialStatus::ok) return trial.reason;
  std::string note = trial.remeasured ? "re-measured interleaved; " : "";
  if (!trial.kernels.empty())
    note += cat("top kernel ", trial.kernels.front().name, " ", static_cast<int>(trial.kernels.front().share_pct + 0.5), "%");
  return note;
}

void print_ranking(const tuner::TuneReport& report) {
  std::vector<const tuner::TrialResult*> rows;
  for (const auto& t : report.trials) rows.push_back(&t);
  // ok by speed, then invalid, failed, skipped, each in measurement order.
  // The winner leads (a tie within noise may crown a slightly slower, simpler config).
  std::stable_sort(rows.begin(), rows.end(), [&](const auto* a, const auto* b) {
    if ((a == report.best_trial()) != (b == report.best_trial())) return a == report.best_trial();
    if (a->status != b->status) return a->status < b->status;
    return a->status == tuner::TrialStatus::ok && a->figures.median_eps > b->figures.median_eps;
  });
  const double base = report.baseline_trial() ? report.baseline_trial()->figures.median_eps : 0;
  std::printf("\n| # | config | status | median ex/s | spread | vs baseline | note |\n");
  std::printf("|---|--------|--------|------------:|-------:|------------:|------|\n");
  int rank = 0;
  for (const auto* t : rows) {
    const bool ok = t->status == tuner::TrialStatus::ok;
    const std::string mark = t == report.best_trial() ? " (best)" : t == report.baseline_trial() ? " (baseline)" : "";
    std::printf("| %d | %s%s | %s | %s | %s | %s | %s |\n", ++rank, t->config.label().c_str(), mark.c_str(),
                to_string(t->status).c_str(), ok ? cat(static_cast<int64_t>(t->figures.median_eps + 0.5)).c_str() : "-",
                ok ? cat(static_cast<int>(t->figures.spread * 1000 + 0.5) / 10.0, "%").c_str() : "-",
                ok && base > 0 ? cat(static_cast<int>(t->figures.median_eps / base * 100 + 0.5) / 100.0, "x").c_str() : "-",
                trial_note(*t).c_str());
  }
}

void write_trace(const std::shared_ptr<const profiler::Trace>& trace, const std::filesystem::path& path) {
  if (!trace) return;
  try {
    profiler::ChromeTraceWriter().write(*trace, path);
  } catch (const std::runtime_error& e) {
    fail(ErrorKind::input, "--trace-dir: ", e.what());
  }
  std::printf("trace: %s\n", path.c_str());
}

}  // namespace

Action add_tune_command(CLI::App& command) {
  auto flags = std::make_shared<TuneFlags>();
  flags->session.add_to(command, /*tuned_knobs=*/false);
  command.add_option("--layouts", flags->layouts, "Layouts to try (comma-separated): nchw,nhwc")
      ->delimiter(',')->capture_default_str();
  command.add_option("--algorithms", flags->algorithms,
                     "Conv algorithms to try (comma-separated; default: all registered for the backend)")
      ->delimiter(',');
  command.add_option("--threads-list", flags->threads, "Thread counts to try (comma-separated)")
      ->delimiter(',')->capture_default_str();
  command.add_option("--streams-list", flags->streams, "Streams (lanes per replica) to try (comma-separated): 1,2,4")
      ->delimiter(',')->capture_default_str();
  command.add_option("--replicas-list", flags->replicas, "Data-parallel replica counts to try (comma-separated)")
      ->delimiter(',')->capture_default_str();
  command.add_option("--micro-batches-list", flags->micro_batches, "Micro-batch counts to try (comma-separated)")
      ->delimiter(',')->capture_default_str();
  command.add_option("--async-update-list", flags->async_update, "Asynchronous update settings to try: off,on")
      ->delimiter(',')->check(CLI::IsMember({"off", "on"}))->capture_default_str();
  command.add_option("--threads-per-lane-list", flags->threads_per_lane,
                     "Threads per lane to try (comma-separated; 0: the candidate's threads shared out over its lanes)")
      ->delimiter(',')->capture_default_str();
  command.add_option("--strategy", flags->strategy,
                     "exhaustive: every candidate; per-layer: time each conv layer's algorithms alone, then "
                     "measure the per-layer pick and its global variants")
      ->capture_default_str();
  command.add_flag("--per-layer-product", flags->per_layer_product,
                   "exhaustive: also try every per-layer combination of algorithms");
  command.add_option("--steps", flags->steps, "Timed steps per candidate")->capture_default_str();
  command.add_option("--warmup", flags->warmup, "Untimed steps per candidate after the numerics check")
      ->capture_default_str();
  command.add_option("--budget", flags->budget, "Seconds after which no new candidate starts (0: none)")
      ->capture_default_str();
  command.add_option("--db", flags->db_path, "Results database (SQLite), created if missing");
  command.add_option("-o,--out", flags->out_path, "Where to write the tuned config (tunescope.config/1 JSON)")
      ->required();
  command.add_option("--trace-dir", flags->trace_dir,
                     "Folder for Chrome traces of the best and the baseline config (best.json, baseline.json)");

  return [flags] {
    tuner::TuneOptions options;
    options.base = flags->session.resolve();
    options.layouts.clear();
    for (const auto& layout : flags->layouts) options.layouts.push_back(parse_layout(layout));
    options.algorithms = flags->algorithms;
    options.threads = flags->threads;
    options.streams = flags->streams;
    options.replicas = flags->replicas;
    options.micro_batches = flags->micro_batches;
    options.async_update.clear();
    for (const auto& setting : flags->async_update) options.async_update.push_back(setting == "on");
    options.threads_per_lane = flags->threads_per_lane;
    options.strategy = tuner::parse_strategy(flags->strategy);
    options.per_layer_product = flags->per_layer_product;
    options.measure.steps = flags->steps;
    options.measure.warmup = flags->warmup;
    options.budget_seconds = flags->budget;
    if (!flags->trace_dir.empty()) std::filesystem::create_directories(flags->trace_dir);

    std::optional<tuner::ResultsDb> db;
    if (!flags->db_path.empty()) db.emplace(flags->db_path);
    tuner::Tuner tuner(options, db ? &*db : nullptr);
    std::printf("tunescope tune: %s, batch %lld on %s, strategy %s\n", options.base.model.c_str(),
                static_cast<long long>(options.base.batch), options.base.data.c_str(), flags->strategy.c_str());
    std::fflush(stdout);

    std::unique_ptr<ProgressBar> bar;
    const tuner::TuneReport report = tuner.run([&](const tuner::TuneProgress& p) {
      if (!bar) bar = std::make_unique<ProgressBar>("tune", static_cast<int64_t>(p.total));
      const std::string best = p.best ? cat("best ", format_rate(p.best->figures.median_eps)) : "best -";
      bar->update(static_cast<int64_t>(p.last ? p.index : p.index - 1), cat(p.candidate, "  ", best));
    });
    if (bar) bar->finish(cat(report.trials.size(), " trials"));

    print_ranking(report);
    const tuner::TrialResult& winner = report.winner();
    std::printf("\nwinner: %s, %.1f ex/s (%s)\n", winner.config.label().c_str(), winner.figures.median_eps,
                report.decision.c_str());
    if (report.budget_exhausted) std::printf("budget of %.1f s exhausted: some candidates were not started\n", flags->budget);
    std::printf("tune took %.1f s on %s\n", report.seconds, report.machine.str().c_str());
    save_run_config(report.tuned_config(flags->strategy), flags->out_path);
    std::printf("config: %s\n", flags->out_path.c_str());
    if (db) std::printf("results: %s\n", db->path().c_str());
    if (!flags->trace_dir.empty()) {
      write_trace(winner.trace, std::filesystem::path(flags->trace_dir) / "best.json");
      if (const auto* base = report.baseline_trial()) write_trace(base->trace, std::filesystem::path(flags->trace_dir) / "baseline.json");
    }
  };
}

}  // namespace tunescope::cli
