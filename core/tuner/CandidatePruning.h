// `--prune on`: candidates predicted clearly slower than the best predicted are not
// measured. Once the tune has measured its baseline (the reference config, traced), the
// pruner runs the per-layer find for every layout and thread count of the space (or takes
// the per-layer strategy's), builds a StepTimePredictor from the two and predicts every
// candidate. A candidate whose prediction exceeds the best prediction by more than the
// margin is recorded with status `pruned` and its prediction in the reason: in the
// results DB and the ranking, never dropped silently. The baseline, candidates the
// predictor cannot predict (lanes, splits, an algorithm's knob off its default) and
// candidates taken from the results DB are never pruned.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tuner/Measurement.h"
#include "core/tuner/PerLayerFind.h"
#include "core/tuner/SearchSpace.h"
#include "core/tuner/StepTimePredictor.h"

namespace tunescope::tuner {

// The margin for predictions off by at most `error` (|pred - meas| / meas) each: a
// candidate predicted above best x (1 + margin) is slower than the best predicted one
// even if it was overestimated by `error` and the best underestimated by `error`:
// pred_c / (1 + e) > pred_b / (1 - e) for margin = (1 + e) / (1 - e) - 1.
double prune_margin_for_error(double error);

// The largest prediction error measured by bench/bench_step_prediction.cpp on lenet5 and
// resnet18-small (docs/BENCHMARKS.md, "Step-time prediction": 69% and 81%, on a machine
// so loaded that the measurements' own 95% intervals were as wide as +-50%): a margin of
// 8.5, which prunes only candidates predicted 9.5x slower than the best. Re-derive it
// from the bench on a quieter machine.
inline constexpr double kMeasuredPredictionError = 0.81;

struct PruneOptions {
  bool enabled = false;
  // Relative: pruned when predicted > best predicted x (1 + margin).
  double margin = prune_margin_for_error(kMeasuredPredictionError);
};

class CandidatePruner {
 public:
  // `candidates`: the tune's list (the baseline first). Throws Error(usage) for a
  // margin that is negative or not finite.
  CandidatePruner(PruneOptions options, const SearchSpace& space, FindOptions find,
                  const std::vector<Candidate>& candidates);

  // The pruned trial of `candidate`, or nullopt to measure it. The first call after the
  // baseline has been measured ok with a trace builds the predictor (`baseline`;
  // `finds`: the per-layer strategy's, if any, reused for the pairs they cover). Before
  // that, and when the baseline failed, nothing is pruned.
  std::optional<TrialResult> prune(const Candidate& candidate, const TrialResult* baseline,
                                   const std::vector<LayerFind>& finds);

  size_t pruned() const { return pruned_; }
  // The prediction of every candidate predicted so far (empty before the predictor).
  const StepTimePredictor* predictor() const { return predictor_.get(); }
  // Why nothing is pruned (empty: pruning runs, or has not started).
  const std::string& off_reason() const { return off_reason_; }

 private:
  void build(const TrialResult& baseline, const std::vector<LayerFind>& finds);

  PruneOptions options_;
  const SearchSpace& space_;
  FindOptions find_;
  std::vector<RunConfig> configs_;  // the runnable candidates but the baseline
  bool built_ = false;
  std::unique_ptr<StepTimePredictor> predictor_;
  double best_ms_ = 0;
  std::string best_label_;
  std::string off_reason_;
  size_t pruned_ = 0;
};

}  // namespace tunescope::tuner
