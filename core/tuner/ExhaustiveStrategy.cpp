// `exhaustive`: every candidate of the space, each measured in full (racing aside): the
// yardstick the other strategies are judged against.
#include "core/tuner/TuneContext.h"
#include "core/tuner/TuningStrategy.h"

namespace tunescope::tuner {

namespace {

class ExhaustiveStrategy final : public TuningStrategy {
 public:
  explicit ExhaustiveStrategy(Strategy kind = Strategy::exhaustive) : kind_(kind) {}
  std::vector<Candidate> candidates(TuneContext& context) override {
    return baseline_and_space(context);
  }
  void measure(TuneContext& context, const std::vector<Candidate>& candidates) override {
    sweep_all(context, candidates);
  }

 protected:
  Strategy kind() const override { return kind_; }

 private:
  Strategy kind_;  // exhaustive, or pruned: the same list, the sweep's pruner on (Tuner::run)
};

}  // namespace

std::unique_ptr<TuningStrategy> make_exhaustive_strategy() {
  return std::make_unique<ExhaustiveStrategy>();
}
std::unique_ptr<TuningStrategy> make_pruned_strategy() {
  return std::make_unique<ExhaustiveStrategy>(Strategy::pruned);
}

}  // namespace tunescope::tuner
