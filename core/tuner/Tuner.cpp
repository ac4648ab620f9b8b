// The frame of a tune: the reference, the strategy (TuningStrategy.h) choosing,
// listing and measuring its candidates through the context (TuneContext.h), and the
// leaders settled in interleaved rounds.
#include "core/tuner/Tuner.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "core/base/CoreDistance.h"
#include "core/base/Error.h"
#include "core/engine/RunConfig.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/TuneContext.h"
#include "core/tuner/TuneLayerTimings.h"
#include "core/tuner/TuningStrategy.h"

namespace tunescope::tuner {

namespace {

using Clock = std::chrono::steady_clock;

// Steps of the reference timed after its first, for the strategy estimates' step time
// and spread (auto only).
constexpr int64_t kReferenceTimedSteps = 8;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The reference config's first two batches (what every candidate must reproduce), its
// conv layers (what the space is built over), whether it has batch norm, its build and
// step time, and the problem key.
struct Reference {
  NumericsSample numerics;
  std::vector<ConvLayerInfo> layers;
  bool has_batch_norm = false;
  ReferenceFacts facts;
  ProblemKey problem;
};

Reference run_reference(const TuneOptions& options) {
  const SessionOptions& base = options.base;
  Reference r;
  // The reference: its first step is what every candidate must reproduce, and its
  // network gives the conv layers the space is built over.
  try {
    SessionOptions ref_options = base;
    apply_run_config(reference_config(base), ref_options);
    // Frozen weights: its second step is the next batch at the initial weights, which a
    // candidate whose first batch differs must then match (Measurement.h). Timing the
    // steps is unaffected: an update costs the same at any learning rate.
    ref_options = frozen_weights(ref_options);
    const auto build_start = Clock::now();
    TrainingSession session(ref_options);
    r.facts.build_seconds = seconds_since(build_start);
    if (session.backend().memory().host_accessible() &&
        options.knobs.contains(knobs::update_on.spec(), knobs::update_on.encode(UpdateOn::host)))
      fail(ErrorKind::usage, list_key(knobs::update_on.spec()), " host: backend ",
           session.backend().name(),
           " keeps its tensors in host memory, where its update already runs; only a backend with "
           "device memory "
           "(cuda) can update on the host");
    r.layers = conv_layers(session.network());
    for (int node = 1; node <= session.network().layer_count(); ++node)
      r.has_batch_norm = r.has_batch_norm || session.network().layer(node).kind() == "bn";
    const auto step_start = Clock::now();
    r.numerics = first_step_numerics(session, options.measure.samples_per_parameter);
    r.facts.step_seconds = seconds_since(step_start);
    add_next_batch(session, r.numerics, options.measure.samples_per_parameter);
    // The first step pays first-touch costs; the next ones are what a timed step costs.
    // Their median, and their spread, which says how many steps adaptive timing will
    // need (timed_steps, StrategyChoice.h). One sample on a shared machine was off by up to 2x
    // (docs/BENCHMARKS.md, "Tuner strategies"). They only refine the estimate: when they
    // fail (say the training diverges) the candidates will say so, and the first step's
    // time stands. Only `auto` needs them.
    if (options.strategy == Strategy::automatic) {
      try {
        std::vector<double> steps;
        auto last = Clock::now();
        session.train_steps(kReferenceTimedSteps, [&](int64_t, int64_t, const StepStats&) {
          steps.push_back(seconds_since(last));
          last = Clock::now();
        });
        if (!steps.empty()) {
          const TimingFigures figures = figures_of(steps, base.batch);
          r.facts.step_seconds = std::min(r.facts.step_seconds, figures.median_step_ms / 1e3);
          r.facts.step_spread = figures.spread;
        }
      } catch (const Error&) {
      }
    }
    const Shape4 in = session.network().input_shape();
    r.problem = {base.model, cat(in.c, "x", in.h, "x", in.w), base.batch};
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input) throw;
    fail(ErrorKind::runtime,
         "the reference config (nchw + the backend's default conv algorithm) failed: ", e.what());
  }
  return r;
}

// The leaders of the sweep (settle_candidates) raced in interleaved rounds until the
// sign-flip test decides every comparison with the fastest, or a cap
// (docs/TUNER-MEASUREMENT.md); their figures replace the sweep's.
void settle_leaders(TuneContext& context) {
  TuneReport& report = context.report();
  const std::vector<size_t> ranked = rank_ok_trials(report.trials);
  report.best = ranked.front();
  const std::vector<size_t> group = settle_candidates(report.trials);
  if (ranked.size() == 1) {
    report.decision = "only one candidate succeeded";
    return;
  }
  if (group.empty()) {
    report.decision = kOnlyFullyMeasuredDecision;
    return;
  }
  std::vector<RunConfig> configs;
  std::vector<std::optional<size_t>> swept;
  for (size_t i : group) {
    configs.push_back(report.trials[i].config);
    swept.emplace_back(i);
  }
  context.settle_in_rounds(configs, swept);
}

// The tune's measure options with the cores its timed steps can count on, from a watch of the
// machine (after the reference ran: nothing of the tune's own is running then).
MeasureOptions watched_measure_options(const TuneOptions& options,
                                       std::optional<ForeignLoad>& watched) {
  MeasureOptions measure = options.measure;
  if (!options.charge_foreign_load) return measure;
  watched = watch_foreign_load();
  measure.free_cores = watched->shared() ? watched->free_cores() : 0;
  return measure;
}

// Points the tune's find options at one tune's timings (TuneLayerTimings.h, over the
// DB's store) while it runs, and back at the store after it.
class TuneTimingsScope {
 public:
  explicit TuneTimingsScope(FindOptions& find)
      : find_(find), store_(find.cache), timings_(find.cache) {
    find_.cache = &timings_;
  }
  ~TuneTimingsScope() { find_.cache = store_; }
  TuneTimingsScope(const TuneTimingsScope&) = delete;
  TuneTimingsScope& operator=(const TuneTimingsScope&) = delete;

 private:
  FindOptions& find_;
  LayerTimingCache* store_;
  TuneLayerTimings timings_;
};

}  // namespace

std::unique_ptr<TrialRunner> reference_runner(const TuneOptions& options) {
  Reference reference = run_reference(options);
  std::optional<ForeignLoad> watched;
  return std::make_unique<TrialRunner>(options.base, watched_measure_options(options, watched),
                                       std::move(reference.numerics), reference.has_batch_norm);
}

const TrialResult& TuneReport::winner() const {
  if (!best) fail(ErrorKind::runtime, "the tune has no winner");
  return trials[*best];
}

RunConfig TuneReport::tuned_config() const {
  const TrialResult& w = winner();
  RunConfig config = w.config;
  MeasuredFigures m;
  m.examples_per_second = w.figures.median_eps;
  m.spread = w.figures.spread;
  if (const TrialResult* base = baseline_trial(); base && base->figures.median_eps > 0)
    m.speedup_vs_baseline = w.figures.median_eps / base->figures.median_eps;
  if (strategy_choice) {
    m.strategy = to_string(strategy_choice->run);
    m.strategy_reason = strategy_choice->reason;
  }
  m.machine = machine.str();
  config.measured = m;
  return config;
}

Tuner::Tuner(TuneOptions options, ResultsDb* db) : options_(std::move(options)), db_(db) {
  const MeasureOptions& m = options_.measure;
  if (m.steps < 1) fail(ErrorKind::usage, "steps must be >= 1, got ", m.steps);
  if (m.max_steps < m.steps || m.max_steps > kMaxTimedSteps)
    fail(ErrorKind::usage, "max_steps must be between steps (", m.steps, ") and ", kMaxTimedSteps,
         ", got ", m.max_steps);
  if (!(m.delta > 0 && m.delta <= 1))
    fail(ErrorKind::usage, "delta must be in (0, 1], got ", m.delta);
  if (!(m.max_timing_seconds > 0 && m.max_timing_seconds <= kMaxTimingSeconds))
    fail(ErrorKind::usage, "max_timing_seconds must be in (0, ", kMaxTimingSeconds, "], got ",
         m.max_timing_seconds);
  if (options_.measure.warmup < 0)
    fail(ErrorKind::usage, "warmup must be >= 0, got ", options_.measure.warmup);
  if (options_.budget_seconds < 0)
    fail(ErrorKind::usage, "budget must be >= 0, got ", options_.budget_seconds);
  if (options_.measure.time_limit_seconds < 0)
    fail(ErrorKind::usage, "trial_timeout must be >= 0, got ", options_.measure.time_limit_seconds);
  options_.knobs.check();
  knobs::threads.set(options_.base.knobs, options_.knobs.get(knobs::threads).front());
  if (options_.resume && !db_) fail(ErrorKind::usage, "resume needs a results DB: set db");
}

TuneReport Tuner::run(const Progress& progress, const ChoiceListener& chosen) {
  const auto start = Clock::now();
  TuneReport report;
  PhaseTimer reference_timer(report.cost.reference);
  Reference reference = run_reference(options_);
  reference_timer.stop();
  report.problem = reference.problem;
  report.machine = MachineSignature::local(options_.base.backend);
  const SearchSpace space({options_.base.model, options_.base.batch, options_.base.backend,
                           options_.algorithms, options_.per_layer_product, options_.knobs},
                          reference.layers);
  PhaseTimer watch_timer(report.cost.reference);
  options_.measure = watched_measure_options(options_, report.foreign_load);
  int max_threads = 1;
  for (int threads : space.options().threads())
    max_threads = std::max(max_threads, threads_or_hardware(threads));
  report.core_distance = start_core_distance_watch(max_threads);
  watch_timer.stop();
  TrialRunner runner(options_.base, options_.measure, std::move(reference.numerics),
                     reference.has_batch_norm);
  const TuneTimingsScope layer_timings(options_.find);
  TuneContext context(options_, space, runner, report, reference.facts, db_, progress, start);

  const std::unique_ptr<TuningStrategy> strategy = make_strategy(options_.strategy);
  PhaseTimer choice_timer(report.cost.choice);
  report.strategy_choice = strategy->choose(context);
  choice_timer.stop();
  if (chosen) chosen(*report.strategy_choice);
  if (db_)
    db_->add_strategy_choice(context.problem_id(), context.machine_id(), *report.strategy_choice);
  PhaseTimer finds_timer(report.cost.finds);
  std::vector<Candidate> candidates = strategy->candidates(context);
  if (options_.filter) candidates = options_.filter(std::move(candidates), context);
  finds_timer.stop();
  PruneOptions prune = options_.prune;
  prune.enabled = prune.enabled || report.strategy_choice->run == Strategy::pruned;
  CandidatePruner pruner(prune, space, options_.find, candidates);
  context.set_pruner(&pruner);
  {
    // The sweep is what measure() spends outside the rounds (settle_in_rounds times those).
    const PhaseCost rounds_before = report.cost.rounds;
    PhaseCost measure_cost;
    PhaseTimer measure_timer(measure_cost);
    strategy->measure(context, candidates);
    measure_timer.stop();
    report.cost.sweep += measure_cost - (report.cost.rounds - rounds_before);
  }

  if (options_.sweep_only) {
    report.ranking = rank_ok_trials(report.trials);
    if (!report.ranking.empty()) report.best = report.ranking.front();
    report.decision = "a share of a distributed tune: not settled here";
    report.seconds = context.seconds();
    return report;
  }
  // Interrupted (before or after the sweep): the best so far, without the re-measurement
  // (the user asked to stop), and no error when nothing finished yet.
  const std::vector<size_t> ranked = rank_ok_trials(report.trials);
  if (report.interrupted || context.stopped()) {
    report.interrupted = true;
    if (!ranked.empty()) report.best = ranked.front();
    report.ranking = ranked;
    report.decision = cat("interrupted after ", report.trials.size(), " of ", candidates.size(),
                          " candidates: the sweep's best so far, not re-measured");
    end_core_distance_watch(report.core_distance);
    report.seconds = context.seconds();
    return report;
  }
  if (ranked.empty()) {
    std::string reasons;
    for (const auto& t : report.trials)
      if (reasons.size() < 2000)
        reasons += cat("\n  ", t.config.label(), ": ", to_string(t.status), ": ", t.reason);
    fail(ErrorKind::runtime, "no candidate succeeded (", report.trials.size(), " tried):", reasons);
  }
  if (!report.settled_in_rounds) settle_leaders(context);
  if (!report.best) report.best = ranked.front();
  report.ranking = ranking_led_by(report.trials, *report.best);
  end_core_distance_watch(report.core_distance);
  report.seconds = context.seconds();
  return report;
}

}  // namespace tunescope::tuner
