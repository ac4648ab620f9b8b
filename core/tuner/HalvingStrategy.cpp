// `halving`: successive halving over exhaustive's field (SuccessiveHalving.h): every
// candidate timed briefly, the fastest 1/eta of each round on to a round timed eta times
// longer, the last one the full measurement. A candidate still racing is recorded to the
// results DB when it leaves the race (its last round's figures), so a resumed tune never
// takes a brief round for a verdict; a kill loses the racing candidates' rounds, an
// interrupt records them.
#include <algorithm>

#include "core/tuner/SuccessiveHalving.h"
#include "core/tuner/TuneContext.h"
#include "core/tuner/TuningStrategy.h"

namespace tunescope::tuner {

namespace {

class HalvingStrategy final : public TuningStrategy {
 public:
  std::vector<Candidate> candidates(TuneContext& context) override {
    return baseline_and_space(context);
  }

  void measure(TuneContext& context, const std::vector<Candidate>& candidates) override {
    const MeasureOptions& full = context.options().measure;
    TuneReport& report = context.report();
    const size_t runnable = static_cast<size_t>(std::count_if(
        candidates.begin(), candidates.end(), [](const Candidate& c) { return c.runnable(); }));
    const size_t total = std::max(runnable, halving_work(runnable));
    context.set_total(total);
    for (const Candidate& candidate : candidates)
      if (!context.sweep(candidate, round_measure(full, halving_steps(runnable, full.steps)), true))
        break;

    // An interrupted first round ends the race: the sweep's best so far stands.
    if (!report.interrupted) {
      std::vector<size_t> racing;
      for (size_t i = 0; i < report.trials.size(); ++i)
        if (report.trials[i].status == TrialStatus::ok) racing.push_back(i);
      report.rounds = racing.empty() ? 0 : 1;
      // The progress total assumed every runnable candidate races on; fewer did.
      context.set_measured(total -
                           (racing.size() > 1 ? halving_work(racing.size()) - racing.size() : 0));
      auto faster = [&](size_t a, size_t b) {
        return report.trials[a].figures.median_eps > report.trials[b].figures.median_eps;
      };
      while (!report.interrupted && racing.size() > 1 && !report.budget_exhausted) {
        std::stable_sort(racing.begin(), racing.end(), faster);
        racing.resize(halving_keep(racing.size()));
        if (racing.size() == 1) break;
        MeasureOptions round = round_measure(full, halving_steps(racing.size(), full.steps));
        round.check_numerics = false;  // every racer passed it in round 0
        for (size_t i : racing)
          if (!context.remeasure(i, round, report.rounds)) break;
        ++report.rounds;
        // A candidate that failed in a longer round leaves the race.
        std::erase_if(racing, [&](size_t i) { return report.trials[i].status != TrialStatus::ok; });
      }
    }
    // However the race ended (one left, budget, interrupt), its candidates are recorded
    // with their last round's figures.
    context.record_deferred();
  }

 protected:
  Strategy kind() const override { return Strategy::halving; }

 private:
  // A round that times fewer than the full minimum of steps is brief: a fixed count, no
  // adaptive timing and no racing (it is a race of its own); the full round is timed
  // adaptively.
  static MeasureOptions round_measure(MeasureOptions m, int64_t steps) {
    if (steps < m.steps) m.steps = m.max_steps = steps;
    return m;
  }
};

}  // namespace

std::unique_ptr<TuningStrategy> make_halving_strategy() {
  return std::make_unique<HalvingStrategy>();
}

}  // namespace tunescope::tuner
