// `per-layer`: a find per (layout, threads) times each conv layer's algorithms alone
// (PerLayerFind.h); the candidates are the config of each layer's fastest algorithm and
// the uniform configs of the algorithms it picked (a uniform one may be as fast and is
// simpler), each crossed with the concurrency knobs.
#include <algorithm>

#include "core/engine/RunKnobs.h"
#include "core/tuner/TuneContext.h"
#include "core/tuner/TuningStrategy.h"

namespace tunescope::tuner {

namespace {

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
        std::sort(picks.begin(), picks.end());
        picks.erase(std::unique(picks.begin(), picks.end()), picks.end());
        for (const std::string& algorithm : picks) add(space.global(layout, threads, algorithm));
        for (LayerFind& f : finds) context.report().finds.push_back(std::move(f));
      }
    return list;
  }
  void measure(TuneContext& context, const std::vector<Candidate>& candidates) override {
    sweep_all(context, candidates);
  }

 protected:
  Strategy kind() const override { return Strategy::per_layer; }
};

}  // namespace

std::unique_ptr<TuningStrategy> make_per_layer_strategy() {
  return std::make_unique<PerLayerStrategy>();
}

}  // namespace tunescope::tuner
