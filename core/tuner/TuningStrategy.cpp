// What the strategies share: the default choice, the factory, exhaustive's list and a
// plain sweep.
#include "core/tuner/TuningStrategy.h"

#include <algorithm>

#include "core/tuner/TuneContext.h"

namespace tunescope::tuner {

StrategyChoice TuningStrategy::choose(TuneContext&) { return choose_strategy(kind(), {}); }

std::unique_ptr<TuningStrategy> make_strategy(Strategy strategy) {
  switch (strategy) {
    case Strategy::exhaustive: return make_exhaustive_strategy();
    case Strategy::per_layer: return make_per_layer_strategy();
    case Strategy::halving: return make_halving_strategy();
    case Strategy::automatic: return make_auto_strategy();
    case Strategy::pruned: return make_pruned_strategy();
  }
  return make_exhaustive_strategy();
}

void add_unique(std::vector<Candidate>& list, Candidate candidate) {
  for (const Candidate& c : list)
    if (c.config == candidate.config) return;
  list.push_back(std::move(candidate));
}

std::vector<Candidate> baseline_and_space(const TuneContext& context) {
  // The baseline goes first: it is the yardstick of every ratio and is never cut by the budget.
  std::vector<Candidate> list{{reference_config(context.options().base), {}}};
  for (Candidate& c : context.space().enumerate()) add_unique(list, std::move(c));
  return list;
}

void sweep_all(TuneContext& context, const std::vector<Candidate>& candidates) {
  context.set_total(static_cast<size_t>(std::count_if(
      candidates.begin(), candidates.end(), [](const Candidate& c) { return c.runnable(); })));
  if (const auto& next = context.options().next_candidate) {
    while (const std::optional<size_t> position = next(candidates.size()))
      if (*position >= candidates.size() ||
          !context.sweep(candidates[*position], context.options().measure))
        break;
    return;
  }
  for (const Candidate& candidate : candidates)
    if (!context.sweep(candidate, context.options().measure)) break;
}

}  // namespace tunescope::tuner
