// A whole tune: the reference, the candidates of a strategy (TuningStrategy.h), one
// measurement each by the trial runner (TrialRunner.h), recorded in the results DB as
// it finishes (TuneContext::record), the interleaved re-measurement of the leaders, and
// the decision. Front ends (CLI, GUI) watch it through the progress callback.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tuner/CandidatePruning.h"
#include "core/tuner/Measurement.h"
#include "core/tuner/PerLayerFind.h"
#include "core/tuner/Ranking.h"
#include "core/tuner/ResultsDb.h"
#include "core/tuner/SearchSpace.h"
#include "core/tuner/SharedMachine.h"
#include "core/tuner/StrategyChoice.h"
#include "core/tuner/TuneCost.h"
#include "profiler/CoreDistanceProbes.h"

namespace tunescope::tuner {

// Bounds of the adaptive timing options, checked before anything runs.
inline constexpr int64_t kMaxTimedSteps = 1'000'000;
inline constexpr double kMaxTimingSeconds = 3600;

class TuneContext;
class TrialRunner;
struct Candidate;

// Other ranks that race the final rounds' leaders beside this one (a distributed tune,
// DistributedTune.h), each on its own machine, for MeasureOptions::rounds_ranks' share.
class RoundsPartners {
 public:
  virtual ~RoundsPartners() = default;
  // The rounds start: the partners race `leaders` too.
  virtual void start(const std::vector<RunConfig>& leaders) = 0;
  // Their rounds once every partner has sent them, without waiting: per partner, per
  // leader, its round seconds (all empty from a partner that could not time them all); none
  // before. Asked at each look after start() until it gives them.
  virtual std::optional<std::vector<std::vector<std::vector<double>>>> rounds_if_sent() = 0;
};
using CandidateFilter =
    std::function<std::vector<Candidate>(std::vector<Candidate> candidates, TuneContext& context)>;

struct TuneOptions {
  SessionOptions base;  // model, data, batch, backend, seed...; its conv and knobs are ignored
  std::vector<std::string> algorithms;  // empty: all registered for the backend
  // The values tried of each knob (layout and threads included; see SpaceOptions).
  // update_on host only on a backend whose memory the host cannot read (run() refuses it
  // elsewhere).
  KnobLists knobs;
  // exhaustive: the reference every other strategy is judged against. The CLI's default
  // is automatic: the strategy estimated cheapest for the problem (StrategyChoice.h).
  Strategy strategy = Strategy::exhaustive;
  bool per_layer_product = false;  // exhaustive: also every per-layer combination
  MeasureOptions measure;
  // On a machine other processes use, charge every timed step for the CPU it takes beyond
  // the cores the others leave free (SharedMachine.h): the tune first watches the machine
  // idle for kForeignLoadWatchSeconds. False: wall time alone.
  bool charge_foreign_load = true;
  // Racing: stop timing a candidate once it is slower than the leader so far with
  // confidence (MeasureOptions::race_against); it is recorded ok, stop raced_out.
  bool racing = true;
  FindOptions find;
  // Skip candidates predicted clearly slower than the best predicted (CandidatePruning.h).
  PruneOptions prune;
  double budget_seconds = 0;  // 0: unbounded; else no candidate starts after this
  // Set (e.g. by a SIGINT handler; a lock-free atomic is async-signal-safe) to stop the
  // tune: no further candidate starts, the trial in flight finishes and is recorded,
  // the interleaved re-measurement is skipped and run() returns the best so far with
  // `interrupted` set instead of throwing.
  const std::atomic<bool>* stop = nullptr;
  // Reuse the trials of the results DB for the same machine signature, problem and
  // config instead of measuring them again (ok, invalid and failed ones; skipped ones
  // only for candidates that cannot run anyway), so an interrupted tune completes
  // where it stopped and a re-tune measures only what is new. Needs a DB. The CLI sets
  // it whenever it has a DB, unless --fresh.
  bool resume = false;
  // Hook before measuring (a predictor's pruning, a warm start's ordering): given the
  // strategy's candidates (the baseline first) and the context (the space, the
  // reference's facts, the results DB's earlier trials: TuneContext::prior), returns
  // those to measure; it must keep the baseline first. Unset: all of them.
  CandidateFilter filter;
  // Candidates handed out as they are asked for (a distributed tune's ranks,
  // DistributedTune.h): given the length of the list (after `filter`), the position of
  // the next candidate this tune measures, or none when the list is used up; exhaustive's
  // sweep asks before each candidate. Unset: every candidate, in order.
  std::function<std::optional<size_t>(size_t count)> next_candidate;
  // Measure the candidates (after `filter`) and return: no interleaved re-measurement,
  // no winner, and no error when none succeeded (a rank's share of a distributed tune,
  // DistributedTune.h).
  bool sweep_only = false;
  // The other ranks' racing leader so far (a distributed tune, DistributedTune.h): a
  // candidate races against it instead of this tune's own leader when it is faster.
  std::function<std::optional<TrialResult>()> shared_leader;
  // The final rounds raced on other ranks too, their rounds pooled with this one's
  // (pooled_rounds); null: this process alone.
  RoundsPartners* rounds_partners = nullptr;
};

// The reference of `options` (what every candidate must reproduce) and a runner that
// checks and times candidates against it, as a tune makes them: for a rank that races
// another rank's leaders.
std::unique_ptr<TrialRunner> reference_runner(const TuneOptions& options);

// Interleaved rounds under way (TuneProgress::rounds), told after each round of a stage:
// rounds can run for a minute on a busy machine, between the announcements of their
// members and their results.
struct RoundsProgress {
  size_t round = 0;    // rounds this stage has run (1 after the first)
  size_t members = 0;  // the stage's members
  size_t joining = 0;  // of them, those new to the tune (recorded as trials at its end)
  size_t racing = 0;   // of them, still racing
  // The rounds of this stage that the last look's verdict says would decide every open
  // comparison (RoundsVerdict::rounds_to_decide, less the stage before's rounds it
  // counts); 0 while it cannot say yet, or when decided.
  size_t to_decide = 0;
  size_t least = 0;  // the rounds it runs at least (minimum_rounds, TrialRunner.h)
  size_t most = 0;   // the rounds it runs at most (maximum_rounds, TrialRunner.h)
};

struct TuneProgress {
  size_t index = 0;  // 1-based among the measurements planned (halving: over all its rounds)
  size_t total = 0;
  size_t round = 0;  // halving: the round (0: the first, brief one); other strategies: 0
  std::string candidate;
  const TrialResult* last = nullptr;    // the trial just finished (null when starting)
  const TrialResult* best = nullptr;    // best ok trial so far (may be null)
  const ProblemKey* problem = nullptr;  // the tune's (known once the reference ran)
  // Set for a round of interleaved rounds (candidate empty, last null; index: the trials
  // recorded before the stage).
  const RoundsProgress* rounds = nullptr;
};

struct TuneReport {
  // Every candidate, in the order measured, with the figures of its last measurement
  // (halving: of the last round it ran in); the leaders settled in interleaved rounds
  // (settle_candidates) carry the figures of those rounds (remeasured = true) when they
  // succeeded.
  std::vector<TrialResult> trials;
  std::optional<size_t>
      baseline;                 // index of the reference config (nchw + the backend's default conv)
  std::optional<size_t> best;   // index of the declared winner
  std::vector<size_t> ranking;  // the ok trials, best first (rank_ok_trials; the winner leads)
  std::string decision;         // how the winner was declared
  std::vector<LayerFind> finds;  // per-layer strategy: each layer's timings
  // The strategy run and why (with every strategy's estimate); absent only in a stored
  // tune whose DB predates the record.
  std::optional<StrategyChoice> strategy_choice;
  bool budget_exhausted = false;
  bool interrupted =
      false;          // options.stop was set: `best` is the sweep's best so far (may be empty)
  size_t reused = 0;  // trials taken from the results DB (resume)
  size_t rounds = 0;  // halving: rounds raced (the first, brief one included)
  // The final interleaved rounds ran (TuneContext::settle_in_rounds): a strategy that
  // races its own candidates there (per-layer) leaves nothing for the tune to settle.
  bool settled_in_rounds = false;
  double seconds = 0;
  TuneCost cost;  // where the seconds went, and the measurement cost (TuneCost.h)
  MachineSignature machine;
  ProblemKey problem;
  // What the machine's other processes took when the tune started (none: not watched,
  // charge_foreign_load off).
  std::optional<ForeignLoad> foreign_load;
  // How far apart the first two CPUs were at the start and the end (none: the candidates
  // run one thread, or one CPU is allowed).
  std::optional<profiler::CoreDistanceWatch> core_distance;

  const TrialResult* best_trial() const { return best ? &trials[*best] : nullptr; }
  const TrialResult* baseline_trial() const { return baseline ? &trials[*baseline] : nullptr; }
  // The winner (its figures from the interleaved re-measurement when there was one).
  const TrialResult& winner() const;
  // The tuned config with the measured figures inside (the strategy run and why from
  // strategy_choice).
  RunConfig tuned_config() const;
};

class Tuner {
 public:
  using Progress = std::function<void(const TuneProgress&)>;
  // Told the strategy choice once it is made: after the reference step, before the
  // per-layer find or the first candidate.
  using ChoiceListener = std::function<void(const StrategyChoice&)>;

  // `db` may be null (no recording).
  Tuner(TuneOptions options, ResultsDb* db = nullptr);
  // Throws Error(runtime) when the reference config cannot run, and when no candidate
  // succeeds (an empty tune is an error, not a silent success) unless interrupted.
  // Throws Error(usage) for resume without a DB.
  TuneReport run(const Progress& progress = {}, const ChoiceListener& chosen = {});

 private:
  TuneOptions options_;
  ResultsDb* db_;
};

}  // namespace tunescope::tuner
