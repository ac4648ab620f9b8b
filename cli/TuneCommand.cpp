// `tunescope tune`: measures the candidates of a strategy over layout x threads x conv
// algorithm x the other knobs (one `-list` flag each, from the knob catalog), records every trial
// in the results DB, prints the ranking, writes the tuned config and the Chrome traces of the
// winner and the baseline (nchw + the backend's default conv). SIGINT/SIGTERM stop it after the
// trial in flight with the best-so-far table (exit 128 + signal). With --db a tune reuses the
// trials the DB holds for this machine, problem and config (so a re-run continues an interrupted
// tune) unless --fresh. `--progress jsonl` streams the progress as JSON lines instead
// (cli/TuneJsonProgress.h).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "cli/Commands.h"
#include "cli/MachinePeaks.h"
#include "cli/RankingTable.h"
#include "cli/SessionFlags.h"
#include "cli/TopFinding.h"
#include "cli/TrainingProgress.h"
#include "cli/TuneJsonProgress.h"
#include "cli/WorkerTrials.h"
#include "core/base/Error.h"
#include "core/base/Ranks.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/DistributedTune.h"
#include "core/tuner/LayerTimingStore.h"
#include "core/tuner/Tuner.h"
#include "profiler/ChromeTraceWriter.h"

namespace tunescope::cli {

namespace {

struct TuneFlags {
  SessionFlags session;
  std::vector<std::string> algorithms;
  // Each knob's `-list` flag as typed (key -> values); knobs not listed keep their tune default.
  std::map<std::string, std::vector<std::string>> knob_lists;
  // Which strategy is cheapest depends on the net (docs/BENCHMARKS.md, "Tuner
  // strategies"): auto estimates each one's cost for the problem and runs the cheapest.
  std::string strategy = "auto";
  bool per_layer_product = false;
  int64_t steps = 5;
  int64_t max_steps = 200;
  double delta = 0.02;
  double max_timing_seconds = 10;
  std::string racing = "on";
  std::string foreign_load = "charge";
  int64_t warmup = 2;
  double budget = 0;
  double memory_limit_mb = 0;
  double trial_timeout = 0;
  std::string isolate = "off";
  std::string prune = "off";
  double prune_margin = tuner::PruneOptions{}.margin;
  std::string db_path;
  bool resume = false;
  bool fresh = false;
  std::string out_path;
  std::string trace_dir;
  std::string progress = "bar";
};

constexpr int64_t kMaxSteps = 1'000'000;

// Set by the signal handler, read by the tuner between candidates. Lock-free, so
// storing to it is async-signal-safe.
std::atomic<bool> g_stop{false};
volatile std::sig_atomic_t g_signal = 0;
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_stop_signal(int signal) {
  g_signal = signal;
  g_stop.store(true);
  // write(2) is async-signal-safe; printf is not.
  constexpr char message[] =
      "\ntunescope: interrupted: finishing the trial in flight (interrupt again to abort at "
      "once)\n";
  ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
  (void)ignored;
}

// Installs the handler for SIGINT and SIGTERM while a tune runs; SA_RESETHAND makes a
// second signal take the default action (the trials already finished are committed).
class StopSignals {
 public:
  StopSignals() {
    g_stop.store(false);
    g_signal = 0;
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// Options that each make sense alone but not together; CLI11 cannot see these.
void check_conflicts(const TuneFlags& flags, tuner::Strategy strategy) {
  if (flags.per_layer_product && strategy == tuner::Strategy::per_layer)
    fail(ErrorKind::usage,
         "--per-layer-product does not apply to --strategy per-layer (which times each layer "
         "alone): use one or the other");
  namespace fs = std::filesystem;
  const auto same_file = [](const fs::path& a, const fs::path& b) {
    return fs::weakly_canonical(a) == fs::weakly_canonical(b);
  };
  if (!flags.db_path.empty() && same_file(flags.out_path, flags.db_path))
    fail(ErrorKind::usage, "--out ", flags.out_path, " is the results DB --db ", flags.db_path,
         ": the tuned config would overwrite the trials");
  if (!flags.trace_dir.empty())
    for (const char* trace : {"best.json", "baseline.json"}) {
      const fs::path path = fs::path(flags.trace_dir) / trace;
      if (same_file(flags.out_path, path) ||
          (!flags.db_path.empty() && same_file(flags.db_path, path)))
        fail(ErrorKind::usage, "--trace-dir ", flags.trace_dir, " would write ", trace, " over ",
             same_file(flags.out_path, path) ? "--out " + flags.out_path : "--db " + flags.db_path);
    }
}

// What `tunescope analyze` would name first on the winner's trace: a tune ends with the
// next thing to try. Never fails the tune: an analysis error becomes the line.
std::string winner_finding_line(const profiler::Trace& trace, const std::string& db_path) {
  try {
    return top_finding_line(trace, trace_peak(trace.metadata, db_path).peak);
  } catch (const std::exception& e) {
    return std::string("top finding: not analysed (") + e.what() + ")";
  }
}

// Returns the path written, or "" when there is no trace to write.
std::string write_trace(const std::shared_ptr<const profiler::Trace>& trace,
                        const std::filesystem::path& path) {
  if (!trace) return {};
  try {
    profiler::ChromeTraceWriter().write(*trace, path);
  } catch (const std::runtime_error& e) {
    fail(ErrorKind::input, "--trace-dir: ", e.what());
  }
  std::printf("trace: %s\n", path.c_str());
  return path.string();
}

// The bar during interleaved rounds: the trials before the stage, and its members new to
// the tune as far as the rounds have come toward those that would decide them (the
// minimum while the verdict cannot say), with the rounds, the racing and that estimate.
double rounds_done(const tuner::TuneProgress& p) {
  const tuner::RoundsProgress& r = *p.rounds;
  const size_t expected = r.to_decide > 0 ? std::min(r.to_decide, r.most) : r.least;
  const double share =
      static_cast<double>(r.round) / static_cast<double>(std::max(expected, r.round + 1));
  return static_cast<double>(p.index) + static_cast<double>(r.joining) * share;
}
std::string rounds_status(const tuner::RoundsProgress& r) {
  return cat("round ", r.round, ": ", r.racing, " of ", r.members, " racing",
             r.to_decide > 0 ? cat(", about ", r.to_decide, " to decide") : std::string());
}

}  // namespace

Action add_tune_command(CLI::App& command) {
  auto flags = std::make_shared<TuneFlags>();
  flags->session.add_to(command, /*tuned_knobs=*/false);
  command
      .add_option(
          "--algorithms", flags->algorithms,
          "Conv algorithms to try (comma-separated; default: all registered for the backend)")
      ->delimiter(',');
  // One `-list` flag per knob of the catalog (core/base/Knob.h).
  for (const KnobSpec& spec : KnobCatalog::instance().specs()) {
    std::vector<std::string>& into = flags->knob_lists[spec.key];
    into = spec.tune_default();
    const std::string names =
        spec.list_alias.empty() ? spec.list_flag() : spec.list_flag() + "," + spec.list_alias;
    const std::string where = spec.scope == KnobScope::conv_algorithm
                                  ? " (only on configs where some layer's algorithm reads it)"
                                  : "";
    command
        .add_option(names, into,
                    cat(spec.key, " values to try, comma-separated (", spec.describe_values(), ")",
                        where, ": ", spec.help))
        ->delimiter(',')
        ->capture_default_str();
  }
  CLI::Option* strategy_option =
      command
          .add_option(
              "--strategy", flags->strategy,
              "auto: the strategy estimated cheapest for this model and space (the estimates are "
              "printed and kept in --out and --db); exhaustive: every candidate; per-layer: time "
              "each conv layer's algorithms alone, then race the per-layer pick, its close "
              "alternatives and its global variants with the baseline in interleaved rounds; "
              "halving: time every candidate "
              "briefly, race the fastest third on with 3x the steps each round (the last round "
              "--steps); pruned: exhaustive's "
              "candidates, those predicted clearly slower not measured (as --prune on)")
          ->capture_default_str();
  command.add_flag(
      "--per-layer-product", flags->per_layer_product,
      "exhaustive and halving: also try every per-layer combination of algorithms (without "
      "--strategy: implies exhaustive)");
  // Bounded: a number too large for int64 reads as its maximum, which would run forever.
  command
      .add_option(
          "--steps", flags->steps,
          "Minimum timed steps per candidate: timing goes on until the 95% interval of the median "
          "step time is within +-delta/2 (halving: the fixed count of its brief rounds is a "
          "fraction "
          "of it)")
      ->check(CLI::Range(int64_t{1}, kMaxSteps))
      ->capture_default_str();
  CLI::Option* max_steps_option = command
                                      .add_option("--max-steps", flags->max_steps,
                                                  "Most timed steps per candidate and interleaved "
                                                  "rounds (default: 200, or --steps if more)")
                                      ->check(CLI::Range(int64_t{1}, kMaxSteps))
                                      ->capture_default_str();
  command
      .add_option(
          "--delta", flags->delta,
          "Relative precision of each candidate's estimate: timing stops once its 95% interval is "
          "within +-delta/2; differences below delta that the final test finds insignificant go to "
          "the simpler config")
      ->check(CLI::Range(1e-4, 1.0))
      ->capture_default_str();
  command
      .add_option(
          "--max-timing-seconds", flags->max_timing_seconds,
          "Most seconds of timed steps per candidate (per config in the final interleaved rounds)")
      ->check(CLI::Range(1e-3, tuner::kMaxTimingSeconds))
      ->capture_default_str();
  command
      .add_option(
          "--racing", flags->racing,
          "on: stop timing a candidate once it is slower than the leader with confidence (its "
          "interval above the leader's by more than delta/2); it is recorded as raced out")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  command
      .add_option(
          "--foreign-load", flags->foreign_load,
          "charge: watch the machine idle for a quarter second first; when other processes use "
          "a quarter core or more, every timed step is charged for the CPU it used beyond the "
          "cores they leave free (docs/TUNER-MEASUREMENT.md, \"A shared machine\"); "
          "ignore: wall time alone")
      ->check(CLI::IsMember({"charge", "ignore"}))
      ->capture_default_str();
  command
      .add_option("--warmup", flags->warmup, "Untimed steps per candidate after the numerics check")
      ->check(CLI::Range(int64_t{0}, kMaxSteps))
      ->capture_default_str();
  command
      .add_option("--budget", flags->budget,
                  "Seconds after which no new candidate starts (0: none)")
      ->capture_default_str();
  command
      .add_option(
          "--memory-limit-mb", flags->memory_limit_mb,
          "Host memory one candidate may allocate (MiB; 0: no limit); beyond it the candidate "
          "is recorded as failed and the tune goes on")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command
      .add_option(
          "--trial-timeout", flags->trial_timeout,
          "Seconds one candidate may take (0: no limit); beyond it the candidate is recorded as "
          "failed and the tune goes on (an isolated candidate is killed at the limit, one measured "
          "in-process is stopped at its next step)")
      ->check(CLI::Range(0.0, 7 * 24 * 3600.0))
      ->capture_default_str();
  command
      .add_option(
          "--isolate", flags->isolate,
          "on: measure each candidate in a child process, so that a crashing or hanging kernel "
          "fails "
          "that candidate instead of the tune (cpu backend only: a CUDA context does not survive "
          "fork; costs ~15% CPU on small tunes, see docs/BENCHMARKS.md)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  command
      .add_option(
          "--prune", flags->prune,
          "on: predict each candidate's step time from the per-layer find and the baseline's "
          "trace, "
          "and do not measure those predicted more than --prune-margin slower than the best "
          "predicted (recorded as pruned, with the prediction)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  command
      .add_option(
          "--prune-margin", flags->prune_margin,
          "--prune on: how much slower than the best prediction a prediction must be to prune it "
          "(relative; the default covers the largest prediction error measured, "
          "docs/BENCHMARKS.md)")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  command.add_option("--db", flags->db_path, "Results database (SQLite), created if missing");
  command.add_flag(
      "--resume", flags->resume,
      "Continue an interrupted tune from --db: what a tune with --db does unless --fresh, "
      "stated (an error without --db)");
  command.add_flag(
      "--fresh", flags->fresh,
      "Measure every candidate again, even those --db holds for this machine, problem and config "
      "(by default they are reused)");
  command
      .add_option("-o,--out", flags->out_path,
                  "Where to write the tuned config (tunescope.config/1 JSON)")
      ->required();
  command.add_option(
      "--trace-dir", flags->trace_dir,
      "Folder for Chrome traces of the best and the baseline config (best.json, baseline.json)");
  command
      .add_option(
          "--progress", flags->progress,
          "bar: a progress bar on stderr; jsonl: one JSON object per line on stdout (start, "
          "trial_start, trial, done; schema tunescope.tune-progress/1 in README) and the report "
          "on stderr")
      ->check(CLI::IsMember({"bar", "jsonl"}))
      ->capture_default_str();

  return [flags, strategy_option, max_steps_option] {
    tuner::TuneOptions options;
    options.base = flags->session.resolve();
    options.algorithms = flags->algorithms;
    for (const auto& [key, values] : flags->knob_lists) {
      const KnobSpec& spec = KnobCatalog::instance().at(key);
      std::vector<std::string> canonical;
      for (const std::string& value : values)
        canonical.push_back(spec.checked(value, spec.list_flag()));
      options.knobs.set_text(spec, std::move(canonical));
    }
    // The product is an exhaustive sweep, so asking for it picks that strategy unless one is named.
    if (flags->per_layer_product && strategy_option->count() == 0) flags->strategy = "exhaustive";
    options.strategy = tuner::parse_strategy(flags->strategy);
    check_conflicts(*flags, options.strategy);
    options.per_layer_product = flags->per_layer_product;
    options.measure.steps = flags->steps;
    options.measure.max_steps = max_steps_option->count() == 0
                                    ? std::max(flags->max_steps, flags->steps)
                                    : flags->max_steps;
    options.measure.delta = flags->delta;
    options.measure.max_timing_seconds = flags->max_timing_seconds;
    options.racing = flags->racing == "on";
    options.charge_foreign_load = flags->foreign_load == "charge";
    if (flags->max_steps < flags->steps)
      fail(ErrorKind::usage, "--max-steps ", flags->max_steps, " is below --steps ", flags->steps);
    options.measure.warmup = flags->warmup;
    options.budget_seconds = flags->budget;
    options.measure.memory_limit_bytes = static_cast<size_t>(flags->memory_limit_mb * 1024 * 1024);
    options.measure.time_limit_seconds = flags->trial_timeout;
    if (flags->isolate == "on" && options.base.backend != "cpu")
      fail(ErrorKind::usage, "--isolate on: candidates of the ", options.base.backend,
           " backend cannot run in a forked child (a CUDA context does not survive fork)");
    options.measure.isolate = flags->isolate == "on";
    // Candidates with workers > 1 run as that many processes under mpirun (docs/MPI.md).
    check_workers_launchable(flags->knob_lists.at(knobs::workers.key()),
                             knobs::workers.spec().list_flag());
    options.measure.launch_workers = make_worker_launcher();
    options.prune.enabled = flags->prune == "on";
    options.prune.margin = flags->prune_margin;
    options.resume = !flags->db_path.empty() && !flags->fresh;
    options.stop = &g_stop;
    if (flags->resume && flags->db_path.empty()) fail(ErrorKind::usage, "--resume needs --db");
    if (flags->resume && flags->fresh)
      fail(ErrorKind::usage, "--resume and --fresh contradict each other");
    if (!flags->trace_dir.empty()) std::filesystem::create_directories(flags->trace_dir);

    // Started as several ranks (mpirun -np N): the candidates spread over the ranks, the
    // trials gathered into rank 0's DB, then rank 0 settles the leaders (docs/MPI.md).
    Communicator* world = world_communicator();
    const bool distributed = world && world->size() > 1;
    if (distributed) {
      if (strategy_option->count() > 0 && options.strategy != tuner::Strategy::exhaustive)
        fail(ErrorKind::usage, "--strategy ", flags->strategy, ": a tune over ", world->size(),
             " ranks spreads exhaustive's candidates over them (leave --strategy out or give "
             "exhaustive)");
      options.strategy = tuner::Strategy::exhaustive;
      flags->strategy = "exhaustive";
      if (flags->db_path.empty())
        fail(ErrorKind::usage, "a tune over ", world->size(),
             " ranks gathers its trials into rank 0's results DB: give --db");
      tuner::check_same_machines(*world, options.base.backend);
      options.measure.rounds_ranks = world->size();  // every rank races the final rounds
    }
    const auto sweep_start = std::chrono::steady_clock::now();
    std::unique_ptr<tuner::RoundsPartners> partners;  // the other ranks in the final rounds
    std::optional<tuner::ResultsDb> db;
    if (!flags->db_path.empty() && (!distributed || world->rank() == 0)) db.emplace(flags->db_path);
    if (distributed) {
      std::printf(
          "tunescope tune: %s, batch %lld on %s, exhaustive's candidates over %d ranks, "
          "gathered into %s\n",
          options.base.model.c_str(), static_cast<long long>(options.base.batch),
          options.base.data.c_str(), world->size(), flags->db_path.c_str());
      std::fflush(stdout);
      const tuner::SweepOutcome sweep = tuner::sweep_shares(
          options, *world, db ? &*db : nullptr, [](int rank, const tuner::TrialResult& t) {
            std::printf("  rank %d: %s: %s%s\n", rank, t.config.label().c_str(),
                        tuner::to_string(t.status).c_str(),
                        t.status == tuner::TrialStatus::ok
                            ? cat(", ", format_rate(t.figures.median_eps)).c_str()
                            : "");
            std::fflush(stdout);
          });
      if (world->rank() != 0) return tuner::race_beside_rank0(options, *world);
      std::printf(
          "the ranks' sweep: %zu trials in %.1f s; rank 0 settles the leaders\n", sweep.gathered,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - sweep_start).count());
      for (const tuner::ShareCost& share : sweep.shares)
        std::printf("  %s\n", tuner::to_string(share).c_str());
      options.resume = true;  // every gathered trial is reused, none measured again
      partners = tuner::rank_partners(*world);
      options.rounds_partners = partners.get();
    }
    // Warm start: the finds reuse the DB's timings of the same conv problems on this machine.
    std::optional<tuner::LayerTimingStore> layer_timings;
    if (db && options.resume) {
      layer_timings.emplace(*db, tuner::MachineSignature::local(options.base.backend),
                            options.base.model);
      options.find.cache = &*layer_timings;
    }
    tuner::Tuner tuner(options, db ? &*db : nullptr);
    std::optional<TuneJsonProgress> json;
    if (flags->progress == "jsonl")
      json.emplace(TuneJsonProgress::Run{options.base.model, options.base.batch, options.base.data,
                                         flags->strategy, flags->db_path});
    std::printf("tunescope tune: %s, batch %lld on %s, strategy %s\n", options.base.model.c_str(),
                static_cast<long long>(options.base.batch), options.base.data.c_str(),
                flags->strategy.c_str());
    std::fflush(stdout);

    std::unique_ptr<ProgressBar> bar;
    double shown = 0;  // what the bar shows done, in trials
    bool halving = options.strategy == tuner::Strategy::halving;
    const auto chosen = [&](const tuner::StrategyChoice& choice) {
      halving = choice.run == tuner::Strategy::halving;
      if (json) json->chosen(choice);
      std::printf("strategy: %s (%s)\n", tuner::to_string(choice.run).c_str(),
                  choice.reason.c_str());
      std::fflush(stdout);
    };
    const tuner::TuneReport report = [&] {
      const StopSignals signals;
      return tuner.run(
          [&](const tuner::TuneProgress& p) {
            if (json) return json->update(p);
            if (!bar) bar = std::make_unique<ProgressBar>("tune", static_cast<int64_t>(p.total));
            bar->set_total(static_cast<int64_t>(p.total));  // per-layer plans anew
            const std::string best =
                p.best ? cat("best ", format_rate(p.best->figures.median_eps)) : "best -";
            // Never back: the rounds' members count as partly done while they race, and
            // their trials come one by one when the stage ends.
            if (p.rounds) {
              shown = std::max(shown, rounds_done(p));
              return bar->update_partial(shown, cat(rounds_status(*p.rounds), "  ", best));
            }
            // A start shows the trials finished so far: the rounds start all their new
            // members at once, under the numbers their trials will get.
            if (p.last) shown = std::max(shown, static_cast<double>(p.index));
            const std::string round = halving ? cat("round ", p.round + 1, ": ") : "";
            bar->update_partial(shown, cat(round, p.candidate, "  ", best));
          },
          chosen);
    }();
    if (bar)
      bar->finish(cat(report.trials.size(), " trials", report.interrupted ? ", interrupted" : ""));

    print_ranking(report);
    if (!report.finds.empty()) {
      const auto timed =
          std::count_if(report.finds.begin(), report.finds.end(),
                        [](const tuner::LayerFind& f) { return f.timed_as.empty(); });
      // Timings the finds took instead of timing them (auto's probe, the results DB).
      size_t taken = 0;
      for (const tuner::LayerFind& f : report.finds)
        if (f.timed_as.empty())
          taken += static_cast<size_t>(
              std::count_if(f.timings.begin(), f.timings.end(),
                            [](const tuner::AlgorithmTiming& t) { return t.reused; }));
      const std::string taken_note =
          taken > 0
              ? cat("; ", taken, " algorithm timings taken from auto's probe or the results DB")
              : std::string();
      std::printf(
          "\nper-layer find: %zu layer finds, %td timed (layers with the same problem share "
          "one)%s\n",
          report.finds.size(), timed, taken_note.c_str());
    }
    if (const auto pruned = std::count_if(
            report.trials.begin(), report.trials.end(),
            [](const tuner::TrialResult& t) { return t.status == tuner::TrialStatus::pruned; }))
      std::printf(
          "\n%td candidates pruned: predicted more than %.0f%% slower than the best predicted (not "
          "measured)\n",
          pruned, options.prune.margin * 100);
    if (report.reused > 0)
      std::printf("\n%zu trials reused from %s\n", report.reused, db->path().c_str());
    if (layer_timings && !layer_timings->error().empty())
      std::fprintf(stderr,
                   "tunescope: warning: per-layer find timings not kept in the results DB: %s\n",
                   layer_timings->error().c_str());
    if (layer_timings && layer_timings->reused() > 0)
      std::printf(
          "%zu per-layer find timings reused from %s (same conv problem, threads and machine), %zu "
          "timed\n",
          layer_timings->reused(), db->path().c_str(), layer_timings->stored());
    if (report.interrupted) {
      // No config and no traces: a partial tune must not leave files that look like a result.
      if (const tuner::TrialResult* best = report.best_trial())
        std::printf("\ninterrupted: best so far: %s, %.1f ex/s (%s)\n",
                    best->config.label().c_str(), best->figures.median_eps,
                    report.decision.c_str());
      else
        std::printf("\ninterrupted: no candidate finished ok yet (%s)\n", report.decision.c_str());
      if (db) std::printf("results: %s (continue with --resume)\n", db->path().c_str());
      std::fflush(stdout);
      if (json) json->done(report, {}, {});
      throw ExitCode{128 + (g_signal ? static_cast<int>(g_signal) : SIGINT)};
    }
    const tuner::TrialResult& winner = report.winner();
    std::printf("\nwinner: %s, %.1f ex/s (%s)\n", winner.config.label().c_str(),
                winner.figures.median_eps, report.decision.c_str());
    if (winner.trace)
      std::printf("%s\n", winner_finding_line(*winner.trace, flags->db_path).c_str());
    if (report.budget_exhausted)
      std::printf("budget of %.1f s exhausted: some candidates were not started\n", flags->budget);
    std::printf("tune took %.1f s on %s\n", report.seconds, report.machine.str().c_str());
    if (report.foreign_load) std::printf("machine: %s\n", report.foreign_load->describe().c_str());
    if (report.core_distance)
      std::printf("cores: %s\n", report.core_distance->describe("tune").c_str());
    std::printf("where it went: %s\n", report.cost.summary().c_str());
    if (distributed)
      std::printf(
          "in all, the ranks' sweep and rank 0's rounds: %.1f s\n",
          std::chrono::duration<double>(std::chrono::steady_clock::now() - sweep_start).count());
    save_run_config(report.tuned_config(), flags->out_path);
    std::printf("config: %s\n", flags->out_path.c_str());
    if (db) std::printf("results: %s\n", db->path().c_str());
    std::map<std::string, std::string> traces;
    if (!flags->trace_dir.empty()) {
      traces["best"] =
          write_trace(winner.trace, std::filesystem::path(flags->trace_dir) / "best.json");
      if (const auto* base = report.baseline_trial())
        traces["baseline"] =
            write_trace(base->trace, std::filesystem::path(flags->trace_dir) / "baseline.json");
      std::erase_if(traces, [](const auto& entry) { return entry.second.empty(); });
    }
    if (json) json->done(report, flags->out_path, traces);
  };
}

}  // namespace tunescope::cli
