// `per-layer`: a find per (layout, threads) times each conv layer's algorithms alone
// (PerLayerFind.h). The candidates, per (layout, threads): the config of each layer's
// fastest algorithm, the same with one layer switched to a close alternative (the find
// alone cannot tell them apart: LayerFind::close), and the uniform configs of the
// algorithms picked (as fast, and simpler), each crossed with the concurrency knobs.
// After the baseline's sweep they are raced in interleaved whole-config rounds
// (TuneContext::settle_in_rounds): a whole config's step is what is chosen, and paired
// rounds tell configs apart on a loaded machine where a sweep of each one alone cannot.
#include <algorithm>
#include <optional>

#include "core/engine/RunKnobs.h"
#include "core/tuner/TuneContext.h"
#include "core/tuner/TuningStrategy.h"

namespace tunescope::tuner {

namespace {

// Close alternatives raced per (layout, threads), the closest first: bounds the race
// on a deep net, where every layer may have one.
constexpr size_t kMaxSwitchedLayers = 2;

class PerLayerStrategy final : public TuningStrategy {
 public:
  std::vector<Candidate> candidates(TuneContext& context) override {
    const TuneOptions& options = context.options();
    const SearchSpace& space = context.space();
    std::vector<Candidate> list{{reference_config(options.base), {}}};
    for (Layout layout : options.knobs.get(knobs::layout))
      for (int threads : options.knobs.get(knobs::threads)) {
        std::vector<LayerFind> finds =
            find_per_layer(space, layout, threads, options.find, options.measure);
        std::vector<std::string> picks;
        for (const LayerFind& f : finds) picks.push_back(f.best);
        // The concurrency knobs are independent of the algorithm picks: each config is tried with
        // each.
        auto add = [&](const Candidate& c) {
          for (Candidate& variant : space.with_knobs(c)) add_unique(list, std::move(variant));
        };
        add(space.per_layer(layout, threads, picks));
        for (const auto& [layer, algorithm] : closest_switches(finds)) {
          std::vector<std::string> switched = picks;
          for (size_t j = 0; j < finds.size(); ++j)  // with the layers timed as it (same problem)
            if (j == layer || finds[j].timed_as == finds[layer].layer) switched[j] = algorithm;
          add(space.per_layer(layout, threads, switched));
        }
        std::sort(picks.begin(), picks.end());
        picks.erase(std::unique(picks.begin(), picks.end()), picks.end());
        for (const std::string& algorithm : picks) add(space.global(layout, threads, algorithm));
        for (LayerFind& f : finds) context.report().finds.push_back(std::move(f));
      }
    return list;
  }
  // The baseline swept (the speed-up's reference, the predictor's trace), then raced in
  // rounds with every other runnable candidate (so that the pick is never a config the
  // baseline beats); those that cannot run are recorded skipped.
  void measure(TuneContext& context, const std::vector<Candidate>& candidates) override {
    std::vector<RunConfig> raced;
    std::vector<std::optional<size_t>> swept;
    for (size_t i = 1; i < candidates.size(); ++i)
      if (candidates[i].runnable()) raced.push_back(candidates[i].config);
    context.set_total(1 + raced.size());
    if (candidates.empty() || !context.sweep(candidates.front(), context.options().measure)) return;
    for (size_t i = 1; i < candidates.size(); ++i)
      if (!candidates[i].runnable() && !context.sweep(candidates[i], context.options().measure))
        return;
    swept.resize(raced.size());
    const TrialResult* baseline = context.report().baseline_trial();
    if (baseline && baseline->status == TrialStatus::ok) {
      raced.insert(raced.begin(), baseline->config);
      swept.insert(swept.begin(), context.report().baseline);
    }
    if (context.stopped() || raced.empty() || (raced.size() == 1 && swept.front()))
      return;  // nothing besides the baseline to race
    context.settle_in_rounds(raced, swept);
  }

 protected:
  Strategy kind() const override { return Strategy::per_layer; }

 private:
  // (layer index, algorithm): each layer's closest alternative, the kMaxSwitchedLayers
  // closest to their layers' best first; layers timed as another (same problem) are
  // switched with it by the caller.
  static std::vector<std::pair<size_t, std::string>> closest_switches(
      const std::vector<LayerFind>& finds) {
    std::vector<std::pair<double, size_t>> gaps;  // (score ratio to the best, layer)
    for (size_t l = 0; l < finds.size(); ++l) {
      if (finds[l].close.empty() || !finds[l].timed_as.empty()) continue;
      double best = 0, alternative = 0;
      for (const AlgorithmTiming& t : finds[l].timings) {
        if (t.algorithm == finds[l].best) best = t.score_ms();
        if (t.algorithm == finds[l].close.front()) alternative = t.score_ms();
      }
      gaps.emplace_back(best > 0 ? alternative / best : 1, l);
    }
    std::stable_sort(gaps.begin(), gaps.end());
    std::vector<std::pair<size_t, std::string>> out;
    for (size_t k = 0; k < gaps.size() && k < kMaxSwitchedLayers; ++k)
      out.emplace_back(gaps[k].second, finds[gaps[k].second].close.front());
    return out;
  }
};

}  // namespace

std::unique_ptr<TuningStrategy> make_per_layer_strategy() {
  return std::make_unique<PerLayerStrategy>();
}

}  // namespace tunescope::tuner
