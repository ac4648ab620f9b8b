// `per-layer`: a find per (layout, threads) times each conv layer's algorithms alone
// (PerLayerFind.h). The candidates, per (layout, threads): the config of each layer's
// fastest algorithm, the same with one layer switched to a close alternative (the find
// alone cannot tell them apart: LayerFind::close), the picks of every other thread
// count's find at this one, the uniform configs of the algorithms that are the pick or
// close on every layer (as fast as far as the find sees, and simpler) and the uniform
// config each thread count's find prices fastest, each crossed with the concurrency
// knobs. With the baseline they are raced in interleaved whole-config rounds
// (TuneContext::settle_in_rounds): a whole config's step is what is chosen, and paired
// rounds tell configs apart on a loaded machine where a sweep of each one alone cannot.
#include <algorithm>
#include <optional>

#include "core/engine/RunKnobs.h"
#include "core/tuner/Ranking.h"
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
    const std::vector<int> thread_counts = options.knobs.get(knobs::threads);
    for (Layout layout : options.knobs.get(knobs::layout)) {
      // Every thread count's find first: each one's picks are raced at every thread count
      // (a find at one count may rank a close pair the other way, and a whole config's
      // step decides, not the find).
      std::vector<std::vector<LayerFind>> finds =
          find_per_layer(space, layout, thread_counts, options.find, options.measure);
      // Each thread count's find's fastest uniform algorithm, raced at every thread count.
      std::vector<std::optional<std::string>> uniforms;
      for (const std::vector<LayerFind>& theirs : finds)
        uniforms.push_back(fastest_uniform(theirs));
      for (size_t t = 0; t < thread_counts.size(); ++t) {
        const int threads = thread_counts[t];
        // The concurrency knobs are independent of the algorithm picks: each config is
        // tried with each.
        auto add = [&](const Candidate& c) {
          for (Candidate& variant : space.with_knobs(c)) add_unique(list, std::move(variant));
        };
        // Another thread count's picks at this one go to the first stage when they differ
        // from this find's on at most kMaxSwitchedLayers layers: a find under load can pick
        // a layer's algorithm wrongly at one thread count (lenet5 at two threads under a
        // busy loop chose direct for conv2, the bound mix with gemm there being the
        // truth's best), and a (layout, threads) whose only member is that pick would be
        // dropped there for good. Picks that differ on more layers show the thread count
        // changing them; they wait for the second stage (on resnet18-small under the loop
        // racing them first took the first stage from 7 configs to 10-13).
        const std::vector<std::string> picks = picks_of(finds[t]);
        for (size_t from = 0; from < finds.size(); ++from) {
          const std::vector<std::string> theirs = picks_of(finds[from]);
          const Candidate pick = space.per_layer(layout, threads, theirs);
          if (layers_apart(picks, theirs) <= kMaxSwitchedLayers)
            for (Candidate& variant : space.with_knobs(pick))
              if (std::find(picks_.begin(), picks_.end(), variant.config) == picks_.end())
                picks_.push_back(variant.config);
          add(pick);
        }
        for (const auto& [layer, algorithm] : closest_switches(finds[t])) {
          std::vector<std::string> switched = picks;
          for (size_t j = 0; j < finds[t].size();
               ++j)  // with the layers timed as it (same problem)
            if (j == layer || finds[t][j].timed_as == finds[t][layer].layer)
              switched[j] = algorithm;
          add(space.per_layer(layout, threads, switched));
        }
        for (const std::string& algorithm : close_everywhere(finds[t]))
          add(space.global(layout, threads, algorithm));
        // Every thread count's, as with the picks: beside another process the two-thread
        // find can price direct's uniform config fastest where the one-thread find, and
        // the whole step, put gemm's first.
        for (const std::optional<std::string>& uniform : uniforms)
          if (uniform) add(space.global(layout, threads, *uniform));
      }
      for (std::vector<LayerFind>& per_threads : finds)
        for (LayerFind& f : per_threads) context.report().finds.push_back(std::move(f));
    }
    return list;
  }
  // The baseline and every other runnable candidate raced in interleaved rounds (so that
  // the pick is never a config the baseline beats): the baseline is not swept alone
  // first, the rounds give it its figures. Those that cannot run are recorded skipped.
  void measure(TuneContext& context, const std::vector<Candidate>& candidates) override {
    if (candidates.empty()) return;
    std::vector<RunConfig> raced{candidates.front().config};
    for (size_t i = 1; i < candidates.size(); ++i)
      if (candidates[i].runnable()) raced.push_back(candidates[i].config);
    context.set_total(raced.size());
    for (size_t i = 1; i < candidates.size(); ++i)
      if (!candidates[i].runnable() && !context.sweep(candidates[i], context.options().measure))
        return;
    if (raced.size() > 1 && !context.stopped()) race_in_two_stages(context, raced);
    // Nothing ok from the rounds (the baseline alone, or the rounds failed as a whole):
    // the baseline measured alone, so that the tune still has its yardstick.
    const bool any_ok =
        std::any_of(context.report().trials.begin(), context.report().trials.end(),
                    [](const TrialResult& t) { return t.status == TrialStatus::ok; });
    if (!any_ok && !context.stopped()) {
      context.report().settled_in_rounds = false;
      if (context.sweep(candidates.front(), context.options().measure))
        context.report().baseline = context.report().trials.size() - 1;
    }
  }

 protected:
  Strategy kind() const override { return Strategy::per_layer; }

 private:
  // The first stage's members: each (layout, threads)'s picks, its own find's and the other
  // thread counts' finds' within kMaxSwitchedLayers layers of it (with the knobs' variants).
  std::vector<RunConfig> picks_;

  // The rounds in two stages. First the baseline and each (layout, threads)'s picks (its
  // own find's and the other thread counts' finds' within kMaxSwitchedLayers layers of
  // it): the find cannot compare layouts and thread counts (the rest of the step differs),
  // so the whole-config rounds decide between them; they stop once only comparisons with
  // members of the fastest's (layout, threads) are open, for the second stage races it
  // again. Then the members still racing with the other candidates (close alternatives,
  // uniform configs) of their (layout, threads) only, with the run knobs (binding,
  // concurrency) of its fastest survivor: within one, the step differs by the conv layers
  // alone, which the find did time, and a (layout, threads) whose picks lost with
  // confidence is not raced again. One stage when there are no such candidates.
  void race_in_two_stages(TuneContext& context, const std::vector<RunConfig>& raced) {
    std::vector<RunConfig> first{raced.front()}, rest;
    for (size_t i = 1; i < raced.size(); ++i)
      (std::find(picks_.begin(), picks_.end(), raced[i]) != picks_.end() ? first : rest)
          .push_back(raced[i]);
    if (rest.empty() || first.size() < 2) {
      context.settle_in_rounds(raced, std::vector<std::optional<size_t>>(raced.size()));
      return;
    }
    TuneReport& report = context.report();
    const size_t first_at = report.trials.size();
    const bool left_open = context.settle_in_rounds(
        first, std::vector<std::optional<size_t>>(first.size()),
        {.drop_at_last_look = true, .next_stage = rest, .earlier_rounds = {}});
    if (context.stopped() || context.over_budget()) return;
    std::vector<RunConfig> second;
    std::vector<double> second_eps;
    std::vector<std::optional<size_t>> swept;
    RoundsStage carried;  // the survivors' first-stage rounds go on in the second
    // Its mixes of one (layout, threads, run knobs) differ only in conv algorithms.
    carried.share_sessions = true;
    for (size_t i = first_at; i < report.trials.size(); ++i)
      if (report.trials[i].remeasured) {  // still racing when the first stage ended
        second.push_back(report.trials[i].config);
        second_eps.push_back(report.trials[i].figures.median_eps);
        swept.emplace_back(i);
        carried.earlier_rounds.push_back(report.trials[i].step_seconds);
      }
    const size_t survivors = second.size();
    for (size_t k : second_stage_candidates(second, second_eps, rest)) {
      second.push_back(rest[k]);
      swept.emplace_back();
    }
    context.set_total(first.size() + second.size() - survivors);
    // A first stage that stopped with comparisons open (its fastest's twins, say) is
    // settled here even when no candidate joins.
    if (second.size() > survivors || (left_open && survivors > 1))
      context.settle_in_rounds(second, swept, carried);
  }

  static size_t layers_apart(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    size_t apart = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) apart += a[i] != b[i];
    return apart;
  }
  static std::vector<std::string> picks_of(const std::vector<LayerFind>& finds) {
    std::vector<std::string> picks;
    for (const LayerFind& f : finds) picks.push_back(f.best);
    return picks;
  }
  // The algorithms the find cannot tell from the pick on any layer (each layer's best or
  // one of its close alternatives): their uniform configs are as fast as far as the find
  // can see, and simpler. An algorithm far behind on some layer is left to the mixes.
  static std::vector<std::string> close_everywhere(const std::vector<LayerFind>& finds) {
    std::vector<std::string> out;
    for (const LayerFind& first : finds) {
      for (const AlgorithmTiming& t : first.timings) {
        const std::string& a = t.algorithm;
        if (std::find(out.begin(), out.end(), a) != out.end()) continue;
        const bool close = std::all_of(finds.begin(), finds.end(), [&](const LayerFind& f) {
          return f.best == a || std::find(f.close.begin(), f.close.end(), a) != f.close.end();
        });
        if (close) out.push_back(a);
      }
      break;  // every layer's timings name the same algorithms
    }
    return out;
  }
  // The algorithm whose uniform config the find prices fastest: the least sum over the
  // layers of its timings (none where one layer has no timing of it). Raced close or not:
  // a find beside another process misplaces single layers, and a net's step is more than
  // its layers timed alone. Beside the busy loop, in seven of eight resnet18-small tunes
  // the two-thread find put gemm outside the close margin on some layer, so its uniform
  // config never raced; the truth put it first, and the mix with direct on the four s1
  // layers that five of those tunes picked 5 % behind (docs/BENCHMARKS.md, session 29).
  static std::optional<std::string> fastest_uniform(const std::vector<LayerFind>& finds) {
    if (finds.empty()) return std::nullopt;
    std::optional<std::string> fastest;
    double least = 0;
    for (const AlgorithmTiming& candidate : finds.front().timings) {
      double sum = 0;
      bool everywhere = true;
      for (const LayerFind& f : finds) {
        const auto t = std::find_if(f.timings.begin(), f.timings.end(), [&](const auto& timing) {
          return timing.algorithm == candidate.algorithm && timing.skip_reason.empty();
        });
        if (t == f.timings.end()) {
          everywhere = false;
          break;
        }
        sum += t->score_ms();
      }
      if (everywhere && (!fastest || sum < least)) {
        fastest = candidate.algorithm;
        least = sum;
      }
    }
    return fastest;
  }
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
