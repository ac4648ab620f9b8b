// How a tune searches: the interface every strategy implements (exhaustive, per-layer,
// halving, auto), and the context a strategy works in (TuneContext.h). Tuner::run is
// the frame around them:
//   reference -> choose -> candidates -> candidate filter -> measure -> settle leaders.
// A strategy decides which candidates are measured and with which timing; it measures
// and records each one through the context (TuneContext::sweep, remeasure, record),
// never the runner or the DB directly, so that resume, budget, interrupt, racing, the
// results DB and progress behave alike for all. Racing is a measurement mode of the
// context (TuneOptions::racing), not a strategy: every strategy's full-length
// measurements race against the leader. To add a strategy: a class in its own file
// here, its name in `Strategy` (StrategyChoice.h) and make_strategy.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/tuner/SearchSpace.h"
#include "core/tuner/StrategyChoice.h"

namespace tunescope::tuner {

class TuneContext;

class TuningStrategy {
 public:
  virtual ~TuningStrategy() = default;
  // Which strategy runs and why: the strategy itself, unless it chooses another (auto,
  // from its cost estimates). Called once, before candidates().
  virtual StrategyChoice choose(TuneContext& context);
  // The candidates to measure, the baseline (the reference config) first: the list the
  // candidate filter (TuneOptions::filter) sees before measure().
  virtual std::vector<Candidate> candidates(TuneContext& context) = 0;
  // Measures `candidates` into context.report() through the context.
  virtual void measure(TuneContext& context, const std::vector<Candidate>& candidates) = 0;

 protected:
  virtual Strategy kind() const = 0;
};

// The strategy of that name; automatic chooses one by cost estimates and runs it.
std::unique_ptr<TuningStrategy> make_strategy(Strategy strategy);
// Each in its own file.
std::unique_ptr<TuningStrategy> make_exhaustive_strategy();
std::unique_ptr<TuningStrategy> make_pruned_strategy();  // exhaustive's list, pruned in the sweep
std::unique_ptr<TuningStrategy> make_per_layer_strategy();
std::unique_ptr<TuningStrategy> make_halving_strategy();
std::unique_ptr<TuningStrategy> make_auto_strategy();

// Exhaustive's list: the baseline, then every candidate of the space (duplicates of the
// baseline dropped). Halving races the same field; auto estimates over it.
std::vector<Candidate> baseline_and_space(const TuneContext& context);
// `candidate` appended unless `list` has its config already.
void add_unique(std::vector<Candidate>& list, Candidate candidate);
// Every candidate swept once with the tune's measurement options (exhaustive, per-layer).
void sweep_all(TuneContext& context, const std::vector<Candidate>& candidates);

}  // namespace tunescope::tuner
