// What a strategy (TuningStrategy.h) works with during one tune: the options, the space,
// the trial runner, the report it fills, the earlier trials of the results DB, and the
// ONE place where a trial is recorded to the results DB and to progress (record), which
// the front ends' terminal bar and jsonl stream watch.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/tuner/CandidatePruning.h"
#include "core/tuner/TrialRunner.h"
#include "core/tuner/Tuner.h"

namespace tunescope::tuner {

// The reference config's facts measured before any strategy runs (Tuner::run).
struct ReferenceFacts {
  double build_seconds = 0;  // building its session
  double step_seconds = 0;   // one training step (auto: the median of a few)
  double step_spread = 0;    // auto: those steps' (p90 - p10) / median
};

// The results DB's earlier trials of this machine and problem (the sweep's rows, not the
// interleaved re-measurements), by config identity (StoredRunConfig::key, so a row an
// older build wrote for the same config in another text is found too). Resume reuses
// them; a warm start or a predictor may read them too. Empty without a DB.
class PriorTrials {
 public:
  PriorTrials() = default;
  PriorTrials(const ResultsDb& db, int64_t problem_id, int64_t machine_id, std::string backend);
  // The earliest stored row of `config` with one of `statuses`, as a reused trial.
  std::optional<TrialResult> find(const RunConfig& config,
                                  const std::vector<TrialStatus>& statuses) const;
  // Every stored row, oldest first (rows this build cannot read left out).
  const std::vector<TrialRecord>& rows() const { return rows_; }

 private:
  std::string backend_;
  std::vector<TrialRecord> rows_;
  std::map<std::string, std::vector<size_t>> by_identity_;  // config identity -> rows_ indices
};

// How one stage of per-layer's rounds relates to the others (TuneContext::settle_in_rounds).
struct RoundsStage {
  // race_drops once more after the last round, so that a member slower with confidence
  // leaves as raced out instead of as a leader still racing (the first stage's leaders
  // race on in the second).
  bool drop_at_last_look = false;
  // The next stage's candidates: the rounds also stop once every comparison left open
  // is with a member of the fastest's layout and thread count, which the next stage
  // races again (open_only_where_raced_again, Ranking.h).
  std::vector<RunConfig> next_stage;
  // Per config, the rounds it ran in the stage before (the survivors that race on; empty
  // for the others): its comparisons with the other survivors go on over those rounds
  // too, instead of from this stage's first round.
  std::vector<std::vector<double>> earlier_rounds;
  // Members that differ only in conv algorithms take their turns in one session
  // (MeasureOptions::share_sessions).
  bool share_sessions = false;
};

class TuneContext {
 public:
  using Clock = std::chrono::steady_clock;
  TuneContext(const TuneOptions& options, const SearchSpace& space, TrialRunner& runner,
              TuneReport& report, ReferenceFacts reference, ResultsDb* db,
              const Tuner::Progress& progress, Clock::time_point start);

  const TuneOptions& options() const { return options_; }
  const SearchSpace& space() const { return space_; }
  TrialRunner& runner() { return runner_; }
  TuneReport& report() { return report_; }
  const TuneReport& report() const { return report_; }
  const ReferenceFacts& reference() const { return reference_; }
  ResultsDb* db() const { return db_; }
  int64_t problem_id() const { return problem_id_; }
  int64_t machine_id() const { return machine_id_; }
  // Loaded on first use; empty without a DB.
  const PriorTrials& prior();

  bool stopped() const { return options_.stop && options_.stop->load(); }
  bool over_budget() const;
  double seconds() const;

  // The measurements planned (the progress bar's total).
  void set_total(size_t total) { total_ = total; }
  size_t total() const { return total_; }
  // Measurements started so far (the progress index); halving corrects it when fewer
  // candidates race on than its total assumed.
  size_t measured() const { return index_; }
  void set_measured(size_t index) { index_ = index; }

  // One candidate of a sweep, appended to report().trials: the DB's earlier verdict when
  // resuming, skipped when it cannot run or the budget is spent, else measured with
  // `measure` (racing against the leader, when on and it is a full-length measurement).
  // Recorded at once, except an ok measurement with `defer_ok` (halving keeps racing it:
  // record it when it leaves). Returns false without a trial when the tune was stopped.
  bool sweep(const Candidate& candidate, const MeasureOptions& measure, bool defer_ok = false);
  // Candidates the pruner predicts clearly slower are recorded pruned, not measured
  // (CandidatePruning.h); null: none is pruned.
  void set_pruner(CandidatePruner* pruner) { pruner_ = pruner; }
  // Measures report().trials[i] again with `measure` in round `round` (halving), its
  // cost added to the earlier rounds'; recorded to progress, to the DB when it leaves
  // the race (record_deferred). False (nothing measured) when stopped or over budget.
  bool remeasure(size_t i, const MeasureOptions& measure, size_t round);
  // Records the deferred trials (in report order).
  void record_deferred();

  // THE one place a trial is recorded: the results DB and/or progress.
  enum Sink { to_db = 1, to_progress = 2 };
  void record(const TrialResult& trial, int sinks, size_t round = 0);
  // Progress: a measurement of `label` starts, whose trial will be number `index` (0: the
  // current, index_; the rounds announce all their new members at once).
  void announce(const std::string& label, size_t round = 0, size_t index = 0) const;
  // Progress: a round of interleaved rounds has run.
  void announce_rounds(const RoundsProgress& rounds) const;

  // THE final choice (SettleInRounds.cpp): `configs` raced in interleaved rounds
  // (measure_interleaved), the clearly slower dropped as the rounds go (race_drops), the
  // rest settled by the sign-flip test (rounds_verdict), within the budget. swept[k]: the
  // trial in report().trials that config k replaces (its sweep's), or none for a
  // candidate measured only here (it is appended, and goes to progress too). Sets
  // report().best, decision and settled_in_rounds; every result goes to the DB.
  // `stage`: per-layer's stages (RoundsStage). Returns whether the rounds stopped with
  // comparisons open for the next stage to settle (open_only_where_raced_again): never
  // without stage.next_stage.
  bool settle_in_rounds(const std::vector<RunConfig>& configs,
                        const std::vector<std::optional<size_t>>& swept,
                        const RoundsStage& stage = {});

  // `measure` racing against `leader`, when there is one, racing is on and `measure` is
  // full length.
  MeasureOptions racing_against(const std::optional<TrialResult>& leader,
                                MeasureOptions measure) const;
  // The leader so far: the fastest fully measured trial with an interval
  // (racing_leader_of), or the other ranks' (TuneOptions::shared_leader) when faster.
  std::optional<TrialResult> racing_leader() const;
  std::optional<size_t> best_index() const;

 private:
  void drop_traces(size_t keep);
  void mark_brief(TrialResult& trial, const MeasureOptions& measure) const;

  const TuneOptions& options_;
  CandidatePruner* pruner_ = nullptr;
  const SearchSpace& space_;
  TrialRunner& runner_;
  TuneReport& report_;
  ReferenceFacts reference_;
  ResultsDb* db_;
  int64_t problem_id_ = 0, machine_id_ = 0;
  const Tuner::Progress& progress_;
  Clock::time_point start_;
  std::optional<PriorTrials> prior_;
  size_t total_ = 0;
  size_t index_ = 0;
  std::vector<size_t> deferred_;
};

}  // namespace tunescope::tuner
