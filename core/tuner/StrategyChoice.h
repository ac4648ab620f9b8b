// `--strategy auto`: which strategy reaches the best config fastest depends on the net
// and the machine (docs/BENCHMARKS.md, "Tuner strategies": per-layer was the cheapest on
// LeNet-5 in every run; on ResNet-18-small its find made it the dearest while most
// candidates failed an older numerics check, and the cheapest quietly once all were
// valid). So before measuring any candidate the tuner estimates what each strategy will
// cost on this problem, from what it knows by then: the candidates after pruning, the
// steps adaptive timing will take per candidate (timed_steps, and racing's early stops:
// sweep_seconds), the reference config's build and step time, and a quick timing
// of the per-layer find on two of the distinct conv problems (the least and the most
// FLOPs). Scaled to all of them that timing is the find's cost; its per-algorithm
// timings price each candidate's step and predict per-layer's picks (price_steps). It
// runs the cheapest (ties within the estimates' error: kStrategyTieFactor), except where
// the space holds per-layer mixes, which only per-layer searches: then per-layer
// (CostInputs::per_layer_mixes). The
// estimates and the reason are printed, kept in the tuned config and the results DB.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/tuner/CandidatePruning.h"
#include "core/tuner/PerLayerFind.h"
#include "core/tuner/SearchSpace.h"

namespace tunescope::tuner {

// automatic: choose one of the others per problem (choose_strategy). pruned:
// exhaustive's candidates with those predicted clearly slower not measured (`--prune on`,
// CandidatePruning.h).
enum class Strategy { exhaustive, per_layer, halving, automatic, pruned };
// "exhaustive", "per-layer", "halving", "auto", "pruned".
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
  size_t distinct_problems = 0;   // conv layers with the same problem are timed once by the find
  double find_seconds = 0;        // the per-layer find, all layouts and thread counts (probe_find)
  bool per_layer_allowed = true;  // false with --per-layer-product (an exhaustive-only sweep)
  // The space holds per-layer mixes (two or more algorithms over two or more distinct
  // conv problems) that only per-layer searches: exhaustive, halving and pruned sweep
  // uniform configs, and the true best was a mix on both nets measured
  // (docs/BENCHMARKS.md, "Tuner accuracy"). Then auto runs per-layer whatever the
  // estimates say (choose_strategy); cost_inputs sets it from the space.
  bool per_layer_mixes = false;
  // auto runs per-layer whatever the estimates say (choose_strategy), so its probe may
  // time at the find's repetitions for the find to take (AutoStrategy).
  bool per_layer_forced() const { return per_layer_allowed && per_layer_mixes; }
  int64_t warmup = 0;
  int64_t steps = 1;  // the minimum of timed steps (MeasureOptions::steps)
  // Adaptive timing (MeasureOptions): a full measurement times steps until the 95%
  // interval of its median is within +-delta/2, at most max_steps (0: exactly `steps`)
  // and max_timing_seconds of steps. How many that takes follows from the step times'
  // relative spread ((p90 - p10) / median), the reference's (Tuner::run): timed_steps.
  int64_t max_steps = 0;
  double max_timing_seconds = 0;  // 0: no cap
  double delta = 0.02;
  double step_spread = 0;
  // Racing (TuneOptions::racing): a full measurement of a candidate slower than the
  // leader so far, beyond both intervals and delta/2, stops after raced_out_steps.
  bool racing = false;
  double build_seconds = 0;  // building one candidate's session (the reference's, timed)
  double step_seconds = 0;   // one training step of the reference config (timed: Tuner::run)
  // Steps priced from the find's probe (price_steps); empty: every candidate steps at
  // step_seconds and per-layer picks its upper bound of algorithms.
  std::vector<double> candidate_step_seconds;  // each runnable candidate, the baseline included
  // The configs per-layer measures in each (layout, threads) pair, with each concurrency
  // variant: its per-layer mix (when it picks two or more algorithms), then the uniform
  // config of each algorithm it picks.
  std::vector<double> per_layer_step_seconds;
  // `pruned` measures the candidates whose priced step is within this of the fastest
  // priced (PruneOptions::margin).
  double prune_margin = PruneOptions{}.margin;
};

// The inputs for a tune over `space`, find_seconds left 0; `build_seconds` and
// `step_seconds` are the reference config's.
CostInputs cost_inputs(const SearchSpace& space, size_t runnable_candidates, int64_t warmup,
                       int64_t steps, double build_seconds, double step_seconds);

// What timing the per-layer find with one repetition (a probe) on the distinct conv
// problems with the least and the most FLOPs, in the first layout and thread count,
// says: the full find's cost (each probe made a full find by find_seconds_of, a line
// through those two (cost vs FLOPs) for every distinct problem, times the layouts and
// thread counts), and each algorithm's fwd + bwd time on the two problems, which a line
// through them (time vs FLOPs) extends to every conv layer (algorithm_ms).
struct FindProbe {
  double find_seconds = 0;
  double least_flops = 0, most_flops = 0;
  std::map<std::string, std::pair<double, double>> ms;  // algorithm -> (least, most), timed on both
};
// Costs about 2 / (distinct problems x layouts x threads) of a find with one
// repetition. `limits`: the find's (find_per_layer). Throws what the find throws (no
// algorithm passes for a layer). `at_find_repetitions`: time at options.repetitions
// instead, where the per-layer find will run anyway: through options.cache
// (TuneLayerTimings) it then takes the probe's timings rather than timing them again.
FindProbe probe_find(const SearchSpace& space, const FindOptions& options,
                     const MeasureOptions& limits = {}, bool at_find_repetitions = false);
// `algorithm`'s fwd + bwd ms on a problem of `flops` by the probe's line (>= 0); -1
// when the probe did not time it on both problems.
double algorithm_ms(const FindProbe& probe, const std::string& algorithm, double flops);
// Prices `in`'s steps from the probe: a config steps at the reference's timed step plus
// the difference of its conv layers' time from the reference's, each layer at its
// algorithm's line (an algorithm the probe did not time counts as the reference's). So
// exhaustive pays for its slow candidates (fft-fftw on ResNet-18-small at half the
// reference's speed) and per-layer's picks, the fast algorithms, step faster. Per-layer's
// picks are each distinct problem's fastest algorithm by the lines. `runnable`: the
// candidates exhaustive measures, the reference first. (Scaling the whole step by an
// algorithm's speed ratio, tried on 2026-12-03, priced the layers that are not conv.)
void price_steps(CostInputs& in, const SearchSpace& space, const std::vector<RunConfig>& runnable,
                 const std::string& reference_algorithm, const FindProbe& probe);
// A full find (`repetitions` timed runs per algorithm) of the layer a probe (one timed
// run per algorithm) took `probe_seconds` on: the probe's fixed part (tensors, the
// direct reference, each algorithm's first run) happens once either way, only the timed
// runs repeat, and the probe's own timings say what one round of them costs. (Scaling
// the whole probe by the runs overstated the ResNet's find 1.4x: its fixed part, with
// direct's slow reference run, is large.)
double find_seconds_of(double probe_seconds, const LayerFind& probe, int repetitions);

struct StrategyEstimate {
  Strategy strategy = Strategy::exhaustive;
  double seconds = 0;       // the whole tune, the final interleaved re-measurement included
  size_t measurements = 0;  // candidate measurements (halving: over all its rounds)
  bool operator==(const StrategyEstimate&) const = default;
};

// The steps a full measurement of a candidate stepping at `step_seconds` times: `steps`
// when timing is not adaptive (max_steps <= steps); else the steps whose median interval
// reaches +-delta/2 at the inputs' spread, n = (1.92 spread / delta)^2 (the median's
// standard error, 1.2533 sigma / sqrt(n), for sigma = spread / 2.563 as in a normal
// distribution, at 95%), between max(steps, 6) and max_steps, and no more than
// max_timing_seconds at that step time. Racing's early stops: sweep_seconds.
int64_t timed_steps(const CostInputs& inputs, double step_seconds);
// The steps a raced-out measurement times: the first chunk that has an interval
// (max(steps, 6)) and one more chunk (a quarter of it, at least 2).
int64_t raced_out_steps(const CostInputs& inputs);
// Full measurements of candidates stepping at `step_seconds`, in the order measured
// (each build + (numerics step when `checked` + warmup + timed) x step), where with
// racing a candidate slower than the leader so far (the fastest not raced out) by more
// than the two medians' intervals after raced_out_steps (at the spread) and delta/2
// times raced_out_steps only.
double sweep_seconds(const CostInputs& inputs, const std::vector<double>& step_seconds,
                     bool checked);
// A race in interleaved rounds (TuneContext::settle_in_rounds) of configs stepping at
// `step_seconds`: each built and checked (no warm-up) and timed for the sign-flip test's
// minimum of rounds, the fastest two on to timed_steps.
double race_seconds(const CostInputs& inputs, std::vector<double> step_seconds);

// Estimates of exhaustive, per-layer (when allowed), halving and, when the steps are
// priced and per-layer is allowed (the find runs), pruned, in that order. pruned is the
// find plus the baseline plus the candidates priced within prune_margin of the fastest.
// A measurement costs build + (numerics step + warmup + timed_steps) x step; halving's rounds
// follow its schedule (SuccessiveHalving.h), its later rounds without the numerics
// step; per-layer is its find (find_seconds) and the race of the baseline and its picks
// (race_seconds). Each measurement's steps at the candidate's priced
// step (price_steps); unpriced, every step is the reference's and per-layer is assumed to pick
// min(algorithms, distinct problems) algorithms per pair (an upper bound; plus the mixed
// config when it picks two or more).
std::vector<StrategyEstimate> estimate_costs(const CostInputs& inputs);

// Estimates within this factor of the cheapest count as a tie; a tie goes to per-layer,
// then exhaustive, then halving. The factor is the estimates' own error, not a bonus
// for a strategy: `auto` runs what is cheapest where the picks are as good (docs/
// BENCHMARKS.md, "Tuner strategies", `bench/run-tuner-bench.sh`, lenet5 batch 64 and
// resnet18-small batch 32, 16 candidates). Until 2026-12-03 it was 1.5, to keep
// per-layer, whose mixed picks had beaten exhaustive's: that ran per-layer on the ResNet
// at 1.40-1.55x exhaustive's cost where halving and exhaustive reached the same best
// pick. With the estimate's errors fixed (a noisy one-step sample of the reference's
// step, the find's fixed part scaled with its repetitions, halving's re-checks, too few
// per-layer picks) the estimated cost ratios to exhaustive came within 6-17 % of the
// measured CPU-time ratios on both nets (2026-12-04, load 5-6: per-layer 0.92x
// estimated vs 0.84-0.89x measured on LeNet-5, 1.6x vs 1.41-1.51x on the ResNet;
// halving 1.05-1.08x vs 0.92-1.05x, 1.0x vs 0.95-0.96x). Within that error a
// preference for per-layer (the only strategy that mixes algorithms per layer) and then
// exhaustive (the yardstick, whose pick no early round can lose) costs little.
inline constexpr double kStrategyTieFactor = 1.1;

struct StrategyChoice {
  Strategy requested = Strategy::automatic;
  Strategy run = Strategy::exhaustive;  // never automatic
  std::vector<StrategyEstimate> estimates;
  std::string reason;  // one line: why `run` (the estimates in words for auto)
  bool operator==(const StrategyChoice&) const = default;
};

// `requested` as given when it is not automatic (no estimates: the quick timing is
// only worth it when there is a choice to make), else the cheapest estimate with ties
// (kStrategyTieFactor) broken in the order per-layer, exhaustive, pruned, halving:
// per-layer is the only strategy that mixes algorithms per layer, exhaustive's pick is
// the yardstick of the others, and pruned measures a subset of exhaustive's.
StrategyChoice choose_strategy(Strategy requested, const CostInputs& inputs);

// "per-layer 12.3 s (14 measurements), exhaustive 20.1 s (17), halving 18.0 s (27)".
std::string describe_estimates(const std::vector<StrategyEstimate>& estimates);
// The estimates as JSON text and back (the results DB's column); throws Error(input)
// naming `source` for text that does not parse.
std::string estimates_to_json(const std::vector<StrategyEstimate>& estimates);
std::vector<StrategyEstimate> estimates_from_json(const std::string& text,
                                                  const std::string& source);

}  // namespace tunescope::tuner
