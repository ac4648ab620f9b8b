// The tune loop: reference, strategy's candidates, measurement with dispositions and
// recording, budget, interleaved confirmation and the tie rule.
#include "core/tuner/Tuner.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/StoredTune.h"
#include "core/tuner/SuccessiveHalving.h"
#include "core/tuner/TrialRunner.h"

namespace tunescope::tuner {

namespace {

using Clock = std::chrono::steady_clock;

// Steps of the reference timed after its first, for the strategy estimates' step time.
constexpr int64_t kReferenceTimedSteps = 3;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void add_unique(std::vector<Candidate>& list, Candidate candidate) {
  for (const Candidate& c : list)
    if (c.config == candidate.config) return;
  list.push_back(std::move(candidate));
}

}  // namespace

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
  if (m.steps < 1) fail(ErrorKind::usage, "--steps must be >= 1, got ", m.steps);
  if (m.max_steps < m.steps || m.max_steps > kMaxTimedSteps)
    fail(ErrorKind::usage, "--max-steps must be between --steps (", m.steps, ") and ", kMaxTimedSteps, ", got ",
         m.max_steps);
  if (!(m.delta > 0 && m.delta <= 1)) fail(ErrorKind::usage, "--delta must be in (0, 1], got ", m.delta);
  if (!(m.max_timing_seconds > 0 && m.max_timing_seconds <= kMaxTimingSeconds))
    fail(ErrorKind::usage, "--max-timing-seconds must be in (0, ", kMaxTimingSeconds, "], got ", m.max_timing_seconds);
  if (options_.measure.warmup < 0) fail(ErrorKind::usage, "--warmup must be >= 0, got ", options_.measure.warmup);
  if (options_.budget_seconds < 0) fail(ErrorKind::usage, "--budget must be >= 0, got ", options_.budget_seconds);
  if (options_.measure.time_limit_seconds < 0)
    fail(ErrorKind::usage, "--trial-timeout must be >= 0, got ", options_.measure.time_limit_seconds);
  options_.knobs.check();
  knobs::threads.set(options_.base.knobs, options_.knobs.get(knobs::threads).front());
  if (options_.resume && !db_) fail(ErrorKind::usage, "--resume needs a results DB (--db)");
}

std::vector<Candidate> Tuner::candidates(const SearchSpace& space, Strategy strategy, TuneReport& report) const {
  // The baseline goes first: it is the yardstick of every ratio and is never cut by the budget.
  std::vector<Candidate> list{{reference_config(options_.base), {}}};
  if (strategy != Strategy::per_layer) {  // exhaustive, and the field halving races
    for (Candidate& c : space.enumerate()) add_unique(list, std::move(c));
    return list;
  }
  // per-layer: per (layout, threads), the config of each layer's fastest algorithm,
  // plus the global configs of the algorithms it picked (a uniform one may be as fast
  // and is simpler).
  for (Layout layout : options_.knobs.get(knobs::layout))
    for (int threads : options_.knobs.get(knobs::threads)) {
      std::vector<LayerFind> finds = find_per_layer(space, layout, threads, options_.find, options_.measure);
      std::vector<std::string> picks;
      for (const LayerFind& f : finds) picks.push_back(f.best);
      // The concurrency knobs are independent of the algorithm picks: each config is tried with each.
      auto add = [&](const Candidate& c) {
        for (Candidate& variant : space.with_knobs(c)) add_unique(list, std::move(variant));
      };
      add(space.per_layer(layout, threads, picks));
      std::sort(picks.begin(), picks.end());
      picks.erase(std::unique(picks.begin(), picks.end()), picks.end());
      for (const std::string& algorithm : picks) add(space.global(layout, threads, algorithm));
      for (LayerFind& f : finds) report.finds.push_back(std::move(f));
    }
  return list;
}

TuneReport Tuner::run(const Progress& progress, const ChoiceListener& chosen) {
  const auto start = Clock::now();
  TuneReport report;
  const SessionOptions& base = options_.base;

  // The reference: its first step is what every candidate must reproduce, and its
  // network gives the conv layers the space is built over.
  NumericsSample reference;
  std::vector<ConvLayerInfo> layers;
  bool has_batch_norm = false;
  double build_seconds = 0, step_seconds = 0;  // the reference's: what the strategy estimates scale
  try {
    SessionOptions ref_options = base;
    apply_run_config(reference_config(base), ref_options);
    // Frozen weights: its second step is the next batch at the initial weights, which a
    // candidate whose first batch differs must then match (Measurement.h). Timing the
    // steps is unaffected: an update costs the same at any learning rate.
    ref_options = frozen_weights(ref_options);
    const auto build_start = Clock::now();
    TrainingSession session(ref_options);
    build_seconds = seconds_since(build_start);
    if (session.backend().memory().host_accessible() &&
        options_.knobs.contains(knobs::update_on.spec(), knobs::update_on.encode(UpdateOn::host)))
      fail(ErrorKind::usage, knobs::update_on.spec().list_flag(), " host: backend ", session.backend().name(),
           " keeps its tensors in host memory, where its update already runs; only a backend with device memory "
           "(cuda) can update on the host");
    layers = conv_layers(session.network());
    for (int node = 1; node <= session.network().layer_count(); ++node)
      has_batch_norm = has_batch_norm || session.network().layer(node).kind() == "bn";
    const auto step_start = Clock::now();
    reference = first_step_numerics(session, options_.measure.samples_per_parameter);
    step_seconds = seconds_since(step_start);
    add_next_batch(session, reference, options_.measure.samples_per_parameter);
    // The first step pays first-touch costs; the next ones are what a timed step costs.
    // Their median of three: one sample on a shared machine was off by up to 2x
    // (docs/BENCHMARKS.md, "Tuner strategies"). They only refine the estimate: when they
    // fail (say the training diverges) the candidates will say so, and the first step's
    // time stands. Only `auto` needs them.
    if (options_.strategy == Strategy::automatic) {
      try {
        std::vector<double> steps;
        auto last = Clock::now();
        session.train_steps(kReferenceTimedSteps, [&](int64_t, int64_t, const StepStats&) {
          steps.push_back(seconds_since(last));
          last = Clock::now();
        });
        std::sort(steps.begin(), steps.end());
        if (!steps.empty()) step_seconds = std::min(step_seconds, steps[steps.size() / 2]);
      } catch (const Error&) {
      }
    }
    const Shape4 in = session.network().input_shape();
    report.problem = {base.model, cat(in.c, "x", in.h, "x", in.w), base.batch};
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input) throw;
    fail(ErrorKind::runtime, "the reference config (nchw + the backend's default conv algorithm) failed: ", e.what());
  }
  report.machine = MachineSignature::local(base.backend);

  SpaceOptions space_options{base.model, base.batch, base.backend, options_.algorithms, options_.per_layer_product,
                             options_.knobs};
  const SearchSpace space(space_options, layers);
  int64_t problem_id = 0, machine_id = 0;
  if (db_) {
    problem_id = db_->problem_id(report.problem);
    machine_id = db_->machine_id(report.machine);
  }
  CostInputs inputs;
  if (options_.strategy == Strategy::automatic) {
    const RunConfig baseline = reference_config(base);
    // The baseline is measured by every strategy, and enumerate() may not hold it.
    std::vector<RunConfig> runnable{baseline};
    for (const Candidate& c : space.enumerate())
      if (c.runnable() && c.config != baseline) runnable.push_back(c.config);
    inputs = cost_inputs(space, runnable.size(), options_.measure.warmup, options_.measure.steps, build_seconds,
                         step_seconds);
    try {
      const FindProbe probe = probe_find(space, options_.find, options_.measure);
      inputs.find_seconds = probe.find_seconds;
      price_steps(inputs, space, runnable, baseline.conv.default_algorithm, probe);
    } catch (const Error&) {
      inputs.per_layer_allowed = false;  // some layer has no passing algorithm: per-layer cannot run
    }
  }
  report.strategy_choice = choose_strategy(options_.strategy, inputs);
  const Strategy strategy = report.strategy_choice->run;
  if (chosen) chosen(*report.strategy_choice);
  if (db_) db_->add_strategy_choice(problem_id, machine_id, *report.strategy_choice);
  const std::vector<Candidate> list = candidates(space, strategy, report);

  TrialRunner runner(base, options_.measure, std::move(reference), has_batch_norm);
  auto record = [&](const TrialResult& trial) {
    if (db_) db_->add_trial(problem_id, machine_id, trial);
  };
  auto stopped = [&] { return options_.stop && options_.stop->load(); };
  // Resume: the DB's earlier verdict on this config, if any. A runnable candidate reuses
  // a measured verdict (a skipped row may be a budget skip: measure it); one that cannot
  // run reuses its skipped row so that it is not recorded twice. Rows are found by the
  // config's identity (StoredRunConfig::key), not its JSON text, so a row an older
  // tunescope wrote for the same config in another text (a knob then written at its
  // default) is found too.
  std::optional<std::map<std::string, std::vector<TrialRecord>>> stored;  // identity -> sweep rows, oldest first
  auto identity = [](const std::string& config_json) {
    return stored_run_config_from_json_text(config_json, "results DB").key();
  };
  auto earlier = [&](const Candidate& candidate) -> std::optional<TrialResult> {
    if (!options_.resume) return std::nullopt;
    if (!stored) {
      stored.emplace();
      for (TrialRecord& row : db_->trials(problem_id)) {
        if (row.machine_id != machine_id || is_remeasurement(row)) continue;
        try {
          (*stored)[identity(row.config_json)].push_back(std::move(row));
        } catch (const Error&) {
          // A row this build cannot read is no earlier verdict on any of its candidates.
        }
      }
    }
    const auto statuses = candidate.runnable()
                              ? std::vector{TrialStatus::ok, TrialStatus::invalid, TrialStatus::failed}
                              : std::vector{TrialStatus::skipped};
    const auto rows = stored->find(identity(to_json_text(candidate.config)));
    if (rows == stored->end()) return std::nullopt;
    for (const TrialRecord& row : rows->second)
      if (std::find(statuses.begin(), statuses.end(), row.status) != statuses.end()) return result_of(row, base.backend);
    return std::nullopt;
  };
  auto best_index = [&]() -> std::optional<size_t> {
    const std::vector<size_t> ranked = rank_ok_trials(report.trials);
    return ranked.empty() ? std::nullopt : std::optional(ranked.front());
  };
  // Only the traces of the baseline and the best so far are worth keeping in memory.
  auto drop_traces = [&](size_t keep) {
    const auto best = best_index();
    for (size_t i = 0; i < report.trials.size(); ++i)
      if (i != best && i != report.baseline && i != keep) report.trials[i].trace.reset();
  };
  auto over_budget = [&] { return options_.budget_seconds > 0 && seconds_since(start) > options_.budget_seconds; };
  const bool halving = strategy == Strategy::halving;
  const size_t runnable =
      static_cast<size_t>(std::count_if(list.begin(), list.end(), [](const Candidate& c) { return c.runnable(); }));
  // Halving's first round times a fraction of --steps; its later rounds are the rest of the work.
  // A round that times fewer than --steps is brief: a fixed count, no adaptive timing
  // and no racing (it is a race of its own); the full round is timed adaptively.
  auto round_measure = [&](int64_t steps) {
    MeasureOptions m = options_.measure;
    if (steps < m.steps) m.steps = m.max_steps = steps;
    return m;
  };
  const MeasureOptions sweep_measure =
      halving ? round_measure(halving_steps(runnable, options_.measure.steps)) : options_.measure;
  // Racing: the leader is the fastest fully measured trial with an interval so far.
  auto racing_against_leader = [&](MeasureOptions m) {
    if (!options_.racing || m.max_steps < options_.measure.max_steps) return m;
    const std::vector<RankTier> tiers = rank_tiers(report.trials);
    for (size_t i : rank_ok_trials(report.trials))
      if (tiers[i] == RankTier::full && report.trials[i].figures.has_interval()) {
        m.race_against = report.trials[i].figures.step_interval(report.trials[i].config.batch);
        break;
      }
    return m;
  };
  // A brief round's figures are marked so: they rank below the fully measured.
  auto mark_brief = [&](TrialResult& trial, const MeasureOptions& m) {
    if (trial.status == TrialStatus::ok && m.max_steps < options_.measure.max_steps)
      trial.figures.stop = StopRule::brief;
  };
  const size_t total = halving ? std::max(runnable, halving_work(runnable)) : runnable;
  std::vector<size_t> unrecorded;  // halving: ok trials still racing, recorded when they leave
  size_t index = 0;
  for (const Candidate& candidate : list) {
    if (stopped()) {
      report.interrupted = true;
      break;
    }
    TrialResult trial;
    bool fresh = true;  // false: reused from the DB, already recorded
    if (std::optional<TrialResult> reused = earlier(candidate)) {
      trial = std::move(*reused);
      fresh = false;
      ++report.reused;
      if (candidate.runnable()) ++index;
    } else if (!candidate.runnable()) {
      trial.config = candidate.config;
      trial.status = TrialStatus::skipped;
      trial.reason = candidate.skip_reason;
    } else if (index > 0 && over_budget()) {
      report.budget_exhausted = true;
      ++index;
      trial.config = candidate.config;
      trial.status = TrialStatus::skipped;
      trial.reason = cat("not started: --budget ", options_.budget_seconds, " s exhausted after ",
                         seconds_since(start), " s");
    } else {
      ++index;
      if (progress) {
        auto best = best_index();
        progress({index, total, 0, candidate.config.label(), nullptr, best ? &report.trials[*best] : nullptr});
      }
      trial = runner.measure(candidate.config, racing_against_leader(sweep_measure));
      mark_brief(trial, sweep_measure);
    }
    if (fresh && halving && trial.status == TrialStatus::ok) unrecorded.push_back(report.trials.size());
    else if (fresh) record(trial);
    report.trials.push_back(std::move(trial));
    if (index == 1 && candidate.runnable()) report.baseline = report.trials.size() - 1;
    drop_traces(report.trials.size() - 1);
    const auto best = best_index();
    if (progress && report.trials.back().status != TrialStatus::skipped)
      progress({index, total, 0, report.trials.back().config.label(), &report.trials.back(),
                best ? &report.trials[*best] : nullptr});
  }

  // Successive halving: the fastest 1/eta of each round go on to a round timed eta times
  // longer (the last one --steps). A kill loses the racing candidates' unrecorded rounds;
  // an interrupt records them.
  if (halving && !report.interrupted) {
    auto faster = [&](size_t a, size_t b) { return report.trials[a].figures.median_eps > report.trials[b].figures.median_eps; };
    std::vector<size_t> racing;
    for (size_t i = 0; i < report.trials.size(); ++i)
      if (report.trials[i].status == TrialStatus::ok) racing.push_back(i);
    report.rounds = racing.empty() ? 0 : 1;
    // The progress total assumed every runnable candidate races on; fewer did.
    index = total - (racing.size() > 1 ? halving_work(racing.size()) - racing.size() : 0);
    while (racing.size() > 1 && !report.budget_exhausted && !report.interrupted) {
      std::stable_sort(racing.begin(), racing.end(), faster);
      racing.resize(halving_keep(racing.size()));
      if (racing.size() == 1) break;
      MeasureOptions round = round_measure(halving_steps(racing.size(), options_.measure.steps));
      round.check_numerics = false;  // every racer passed it in round 0
      for (size_t i : racing) {
        if (stopped()) {
          report.interrupted = true;
          break;
        }
        if (over_budget()) {
          report.budget_exhausted = true;
          break;
        }
        ++index;
        if (progress) {
          auto best = best_index();
          progress({index, total, report.rounds, report.trials[i].config.label(), nullptr,
                    best ? &report.trials[*best] : nullptr});
        }
        TrialResult trial = runner.measure(report.trials[i].config, racing_against_leader(round));
        mark_brief(trial, round);
        trial.seconds += report.trials[i].seconds;  // the candidate's cost over all its rounds
        report.trials[i] = std::move(trial);
        if (std::find(unrecorded.begin(), unrecorded.end(), i) == unrecorded.end()) unrecorded.push_back(i);
        drop_traces(i);
        const auto best = best_index();
        if (progress)
          progress({index, total, report.rounds, report.trials[i].config.label(), &report.trials[i],
                    best ? &report.trials[*best] : nullptr});
      }
      ++report.rounds;
      // A candidate that failed in a longer round leaves the race.
      std::erase_if(racing, [&](size_t i) { return report.trials[i].status != TrialStatus::ok; });
    }
  }
  // However the race ended (one left, budget, interrupt), its candidates are recorded
  // with their last round's figures.
  std::sort(unrecorded.begin(), unrecorded.end());
  for (size_t i : unrecorded) record(report.trials[i]);

  // Rank the ok trials; the leaders are settled in interleaved rounds before a winner is declared.
  const std::vector<size_t> ranked = rank_ok_trials(report.trials);
  // Interrupted (before or after the sweep): the best so far, without the re-measurement
  // (the user asked to stop), and no error when nothing finished yet.
  if (report.interrupted || stopped()) {
    report.interrupted = true;
    if (!ranked.empty()) report.best = ranked.front();
    report.ranking = ranked;
    report.decision = cat("interrupted after ", report.trials.size(), " of ", list.size(),
                          " candidates: the sweep's best so far, not re-measured");
    report.seconds = seconds_since(start);
    return report;
  }
  if (ranked.empty()) {
    std::string reasons;
    for (const auto& t : report.trials)
      if (reasons.size() < 2000) reasons += cat("\n  ", t.config.label(), ": ", to_string(t.status), ": ", t.reason);
    fail(ErrorKind::runtime, "no candidate succeeded (", report.trials.size(), " tried):", reasons);
  }
  report.best = ranked.front();
  const std::vector<size_t> group = settle_candidates(report.trials);
  if (ranked.size() == 1) {
    report.decision = "only one candidate succeeded";
  } else if (group.empty()) {
    report.decision = kOnlyFullyMeasuredDecision;
  } else {
    // The leaders in interleaved rounds until the sign test decides every comparison
    // with the fastest, or a cap (docs/TUNER-MEASUREMENT.md).
    std::vector<RunConfig> configs;
    for (size_t i : group) configs.push_back(report.trials[i].config);
    const double delta = options_.measure.delta;
    std::vector<TrialResult> rounds = runner.measure_interleaved(
        configs,
        [&](const std::vector<std::vector<double>>& seconds) { return rounds_verdict(configs, seconds, delta).settled; });
    const bool all_ok = std::all_of(rounds.begin(), rounds.end(), [](const TrialResult& t) { return t.status == TrialStatus::ok; });
    if (!all_ok) {
      report.decision = cat("interleaved re-measurement failed (", rounds.front().reason, "); the sweep's fastest wins");
      for (const TrialResult& t : rounds) record(t);
    } else {
      std::vector<std::vector<double>> seconds;
      for (const TrialResult& t : rounds) seconds.push_back(t.step_seconds);
      const RoundsVerdict verdict = rounds_verdict(configs, seconds, delta);
      report.best = group[verdict.winner];
      report.decision = verdict.decision;
      // The interleaved figures are the fairer comparison: they replace the sweep's.
      for (size_t k = 0; k < group.size(); ++k) {
        TrialResult& fresh = rounds[k];
        fresh.reason = k == verdict.winner
                           ? cat(kRemeasureWinnerReason, verdict.decision)
                           : cat(kRemeasureReason, " of ", group.size(), " configs over ", fresh.figures.steps,
                                 " rounds; the winner: ", configs[verdict.winner].label());
        record(fresh);
        const double seconds_before = report.trials[group[k]].seconds;
        report.trials[group[k]] = std::move(fresh);
        report.trials[group[k]].seconds += seconds_before;
        report.trials[group[k]].remeasured = true;
      }
    }
  }
  report.ranking = ranking_led_by(report.trials, *report.best);
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace tunescope::tuner
