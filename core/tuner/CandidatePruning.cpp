// Pruning by predicted step time (see CandidatePruning.h).
#include "core/tuner/CandidatePruning.h"

#include <cmath>
#include <set>

#include "core/base/Error.h"

namespace tunescope::tuner {

double prune_margin_for_error(double error) { return (1 + error) / (1 - error) - 1; }

CandidatePruner::CandidatePruner(PruneOptions options, const SearchSpace& space, FindOptions find,
                                 const std::vector<Candidate>& candidates)
    : options_(options), space_(space), find_(find) {
  if (!(options_.margin >= 0) || !std::isfinite(options_.margin))
    fail(ErrorKind::usage, "prune_margin must be a finite number >= 0, got ", options_.margin);
  for (size_t i = 1; i < candidates.size(); ++i)
    if (candidates[i].runnable()) configs_.push_back(candidates[i].config);
}

void CandidatePruner::build(const TrialResult& baseline, const std::vector<LayerFind>& known) {
  built_ = true;
  std::vector<std::string> layers;
  for (const ConvLayerInfo& l : space_.layers()) layers.push_back(l.name);
  std::vector<LayerFind> finds = known;
  std::set<std::pair<Layout, int>> covered;
  for (const LayerFind& f : known) covered.emplace(f.layout, f.threads);
  try {
    for (Layout layout : space_.options().layouts())
      for (int threads : space_.options().threads())
        if (!covered.count({layout, threads})) {
          std::vector<LayerFind> found = find_per_layer(space_, layout, threads, find_);
          finds.insert(finds.end(), found.begin(), found.end());
        }
    predictor_ = std::make_unique<StepTimePredictor>(
        profile_reference(*baseline.trace, layers,
                          baseline.config.conv.default_algorithm.empty()
                              ? reference_conv_algorithm(space_.options().backend)
                              : baseline.config.conv.default_algorithm,
                          baseline.config.layout(), baseline.config.threads()),
        std::move(finds));
  } catch (const Error& e) {
    off_reason_ = cat("no pruning: ", e.what());
    return;
  }
  for (const RunConfig& config : configs_) {
    const StepPrediction p = predictor_->predict(config);
    if (p.predicted() && (best_label_.empty() || p.step_ms < best_ms_)) {
      best_ms_ = p.step_ms;
      best_label_ = config.label();
    }
  }
  const StepPrediction own = predictor_->predict(baseline.config);
  if (own.predicted() && (best_label_.empty() || own.step_ms < best_ms_)) {
    best_ms_ = own.step_ms;
    best_label_ = baseline.config.label();
  }
}

std::optional<TrialResult> CandidatePruner::prune(const Candidate& candidate,
                                                  const TrialResult* baseline,
                                                  const std::vector<LayerFind>& finds) {
  if (!options_.enabled || !candidate.runnable()) return std::nullopt;
  if (!built_) {
    if (!baseline || baseline->status != TrialStatus::ok || !baseline->trace) return std::nullopt;
    build(*baseline, finds);
  }
  if (!predictor_ || best_label_.empty() || !baseline || candidate.config == baseline->config)
    return std::nullopt;
  const StepPrediction p = predictor_->predict(candidate.config);
  if (!p.predicted() || p.step_ms <= best_ms_ * (1 + options_.margin)) return std::nullopt;
  TrialResult trial;
  trial.config = candidate.config;
  trial.status = TrialStatus::pruned;
  const auto r = [](double x) {
    return std::round(x * 100) / 100;
  };  // 0.01 ms or % is finer than the error
  trial.reason =
      cat("predicted ", r(p.step_ms), " ms/step (conv ", r(p.conv_ms), " + other kernels ",
          r(p.non_conv_ms), " + idle ", r(p.idle_ms), "), ", r((p.step_ms / best_ms_ - 1) * 100),
          "% above the best predicted ", r(best_ms_), " ms (", best_label_, "); margin ",
          r(options_.margin * 100), "%");
  ++pruned_;
  return trial;
}

}  // namespace tunescope::tuner
