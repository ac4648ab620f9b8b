// `auto`: estimates what each strategy would cost on this problem (StrategyChoice.h),
// from the space, the reference's build and step time and a probe of the per-layer find,
// and runs the cheapest.
#include "core/base/Error.h"
#include "core/tuner/TuneContext.h"
#include "core/tuner/TuningStrategy.h"

namespace tunescope::tuner {

namespace {

class AutoStrategy final : public TuningStrategy {
 public:
  StrategyChoice choose(TuneContext& context) override {
    const TuneOptions& options = context.options();
    const SearchSpace& space = context.space();
    const RunConfig baseline = reference_config(options.base);
    // The baseline is measured by every strategy, and enumerate() may not hold it.
    std::vector<RunConfig> runnable{baseline};
    for (const Candidate& c : space.enumerate())
      if (c.runnable() && c.config != baseline) runnable.push_back(c.config);
    CostInputs inputs =
        cost_inputs(space, runnable.size(), options.measure.warmup, options.measure.steps,
                    context.reference().build_seconds, context.reference().step_seconds);
    inputs.max_steps = options.measure.max_steps;
    inputs.max_timing_seconds = options.measure.max_timing_seconds;
    inputs.delta = options.measure.delta;
    inputs.step_spread = context.reference().step_spread;
    inputs.racing = options.racing;
    try {
      // Where per-layer runs whatever the estimates say, the probe's timings serve its find.
      const FindProbe probe =
          probe_find(space, options.find, options.measure, inputs.per_layer_forced());
      inputs.find_seconds = probe.find_seconds;
      price_steps(inputs, space, runnable, baseline.conv.default_algorithm, probe);
    } catch (const Error&) {
      inputs.per_layer_allowed =
          false;  // some layer has no passing algorithm: per-layer cannot run
    }
    StrategyChoice choice = choose_strategy(Strategy::automatic, inputs);
    chosen_ = make_strategy(choice.run);
    return choice;
  }
  std::vector<Candidate> candidates(TuneContext& context) override {
    return chosen_->candidates(context);
  }
  void measure(TuneContext& context, const std::vector<Candidate>& candidates) override {
    chosen_->measure(context, candidates);
  }

 protected:
  Strategy kind() const override { return Strategy::automatic; }

 private:
  std::unique_ptr<TuningStrategy> chosen_;
};

}  // namespace

std::unique_ptr<TuningStrategy> make_auto_strategy() { return std::make_unique<AutoStrategy>(); }

}  // namespace tunescope::tuner
