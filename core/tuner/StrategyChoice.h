// `--strategy auto`: which strategy reaches the best config fastest depends on the net
// (docs/BENCHMARKS.md, "Tuner strategies": per-layer is cheapest on LeNet-5, its find
// over 18 layers made it the dearest on ResNet-18-small). So before measuring anything
// the tuner estimates what each strategy will cost on this problem, from what it knows
// by then: the candidates after pruning, the conv layers and their distinct problems,
// the steps per candidate, and the reference config's build and step time, and runs the
// cheapest. The estimates and the reason are printed, kept in the tuned config and the
// results DB.
#pragma once

#include <string>
#include <vector>

#include "core/tuner/SearchSpace.h"

namespace tunescope::tuner {

// automatic: choose one of the other three per problem (choose_strategy).
enum class Strategy { exhaustive, per_layer, halving, automatic };
// "exhaustive", "per-layer", "halving", "auto".
std::string to_string(Strategy strategy);
// Throws Error(usage) naming the value.
Strategy parse_strategy(const std::string& text);

// What a cost estimate is made of, all known before the first candidate is measured.
struct CostInputs {
  size_t candidates = 0;  // runnable candidates of the whole space, the baseline included
  // Runnable configs per (layout, threads, algorithm choice): the concurrency knobs'
  // product (what per-layer measures each of its picks with).
  size_t concurrency_variants = 1;
  size_t layout_thread_pairs = 1;  // the per-layer find runs once per pair
  size_t algorithms = 1;           // algorithms considered
  size_t conv_layers = 0;
  size_t distinct_problems = 0;  // conv layers with the same problem are timed once by the find
  // The find's work in units of one training step: per pair, per distinct problem, its
  // share of the step's conv FLOPs x (algorithms that run it x (1 + repetitions) + the
  // direct reference run).
  double find_step_units = 0;
  bool per_layer_allowed = true;  // false with --per-layer-product (an exhaustive-only sweep)
  int64_t warmup = 0;
  int64_t steps = 1;
  double build_seconds = 0;  // building one candidate's session (the reference's, timed)
  double step_seconds = 0;   // one training step of the reference config (timed)
};

// The inputs for a tune over `space`; `build_seconds` and `step_seconds` are the
// reference config's.
CostInputs cost_inputs(const SearchSpace& space, size_t runnable_candidates, int64_t warmup, int64_t steps,
                       int find_repetitions, double build_seconds, double step_seconds);

struct StrategyEstimate {
  Strategy strategy = Strategy::exhaustive;
  double seconds = 0;       // the whole tune, the final interleaved re-measurement included
  size_t measurements = 0;  // candidate measurements (halving: over all its rounds)
  bool operator==(const StrategyEstimate&) const = default;
};

// What one algorithm run of the per-layer find costs beside its layer's share of a
// reference (direct) step: the find checks each result against direct, allocates per
// algorithm, plans FFTs, and the slower algorithms run there too. Calibrated on
// measured finds (see the .cpp).
inline constexpr double kFindCostFactor = 2.0;

// Estimates of exhaustive, per-layer (when allowed) and halving, in that order.
// A measurement costs build + (numerics step + warmup + steps) x step; halving's rounds
// follow its schedule (SuccessiveHalving.h); per-layer is its find (find_step_units x
// step x kFindCostFactor) plus the
// measurement of its picks, assuming the find picks min(2, algorithms, distinct
// problems) algorithms per pair (plus the mixed config when it picks two).
std::vector<StrategyEstimate> estimate_costs(const CostInputs& inputs);

// Estimates within this factor of the cheapest count as a tie (see the .cpp for the
// measurements behind it); a tie goes to per-layer, then exhaustive, then halving.
inline constexpr double kStrategyTieFactor = 1.25;

struct StrategyChoice {
  Strategy requested = Strategy::automatic;
  Strategy run = Strategy::exhaustive;  // never automatic
  std::vector<StrategyEstimate> estimates;
  std::string reason;  // one line: why `run` (the estimates in words for auto)
  bool operator==(const StrategyChoice&) const = default;
};

// `requested` as given when it is not automatic (the estimates still attached, so a tune
// of any strategy says what the others would have cost), else the cheapest estimate
// with ties (kStrategyTieFactor) broken in the order per-layer, exhaustive, halving:
// per-layer is the only strategy that mixes algorithms per layer, and exhaustive's pick
// is the yardstick of the others.
StrategyChoice choose_strategy(Strategy requested, const CostInputs& inputs);

// "per-layer 12.3 s (14 measurements), exhaustive 20.1 s (17), halving 18.0 s (27)".
std::string describe_estimates(const std::vector<StrategyEstimate>& estimates);
// The estimates as JSON text and back (the results DB's column); throws Error(input)
// naming `source` for text that does not parse.
std::string estimates_to_json(const std::vector<StrategyEstimate>& estimates);
std::vector<StrategyEstimate> estimates_from_json(const std::string& text, const std::string& source);

}  // namespace tunescope::tuner
