// The `auto` strategy rule on synthetic spaces (which strategy for which sizes, and the
// reason it gives), the estimates' arithmetic, their JSON round trip, and the inputs
// taken from real spaces (ResNet-18-small repeats conv problems, LeNet-5 does not).
#include "core/tuner/StrategyChoice.h"

#include <gtest/gtest.h>

#include "TestAlgorithms.h"
#include "core/base/Error.h"
#include "core/engine/Models.h"
#include "core/engine/RunKnobs.h"

namespace tunescope::tuner {
namespace {

// A LeNet-5-like space as the CLI's benchmark builds it: 2 layouts x 4 algorithms x
// streams 1,2 (+ the baseline), two distinct conv layers, 10 steps after 3 warm-up, a
// session that builds in about 12 steps' time (fake data).
CostInputs small_net() {
  CostInputs in;
  in.candidates = 17;
  in.concurrency_variants = 2;
  in.layout_thread_pairs = 2;
  in.algorithms = 4;
  in.conv_layers = 2;
  in.distinct_problems = 2;
  in.find_seconds =
      2.5;  // 100 step times: per layout, 2 problems x 4 algorithms x 6 runs, each ~2 steps' share
  in.warmup = 3;
  in.steps = 10;
  in.build_seconds = 0.3;
  in.step_seconds = 0.025;
  return in;
}

// The same space on a net whose 18 conv layers are all different problems, timed only
// 3 steps after 1 warm-up: the find is as dear as many candidate measurements.
CostInputs deep_net_few_steps() {
  CostInputs in = small_net();
  in.conv_layers = 18;
  in.distinct_problems = 18;
  in.find_seconds = 20;
  in.warmup = 1;
  in.steps = 3;
  in.build_seconds = 0.3;
  in.step_seconds = 0.2;
  return in;
}

const StrategyEstimate& estimate_of(const StrategyChoice& choice, Strategy strategy) {
  for (const StrategyEstimate& e : choice.estimates)
    if (e.strategy == strategy) return e;
  throw std::runtime_error("no estimate for " + to_string(strategy));
}

TEST(StrategyChoice, EstimatesFollowTheMeasurementCounts) {
  const CostInputs in = small_net();
  const std::vector<StrategyEstimate> e = estimate_costs(in);
  ASSERT_EQ(e.size(), 3u);
  const double measurement =
      0.3 + (1 + 3 + 10) * 0.025;  // build + numerics + warm-up + timed steps
  EXPECT_EQ(e[0].strategy, Strategy::exhaustive);
  EXPECT_EQ(e[0].measurements, 17u);
  EXPECT_NEAR(e[0].seconds, (17 + 2) * measurement, 1e-9);  // + the interleaved pair
  // per-layer: the find, then the race of the baseline and 2 pairs x 2 concurrency
  // variants x (2 picks + their mix), each member built and checked (no warm-up); the
  // leading two timed for max(steps, 6) = 10 rounds, which is a full measurement's count
  // here, the other 11 for the separation test's first look (5 rounds).
  EXPECT_EQ(e[1].strategy, Strategy::per_layer);
  EXPECT_EQ(e[1].measurements, 1u + 2 * 2 * 3);
  EXPECT_NEAR(e[1].seconds, 2.5 + 2 * (0.3 + (1 + 10) * 0.025) + 11 * (0.3 + (1 + 5) * 0.025),
              1e-9);
  // halving with eta 3: 17 at ceil(10/9) = 2 steps, 6 at ceil(10/3) = 4, 2 at 10; the
  // later rounds without the numerics step (checked once, in round 0).
  EXPECT_EQ(e[2].strategy, Strategy::halving);
  EXPECT_EQ(e[2].measurements, 17u + 6 + 2);
  auto at = [&](int64_t steps, int checks) { return 0.3 + (checks + 3 + steps) * 0.025; };
  EXPECT_NEAR(e[2].seconds, 17 * at(2, 1) + 6 * at(4, 0) + 2 * at(10, 0) + 2 * measurement, 1e-9);
}

TEST(StrategyChoice, SmallNetGoesPerLayer) {
  const StrategyChoice choice = choose_strategy(Strategy::automatic, small_net());
  EXPECT_EQ(choice.requested, Strategy::automatic);
  EXPECT_EQ(choice.run, Strategy::per_layer);
  EXPECT_EQ(
      choice.reason.rfind(
          "auto: per-layer has the cheapest estimate; estimated before measuring: exhaustive ", 0),
      0u)
      << choice.reason;
}

TEST(StrategyChoice, DeepNetWithFewStepsGoesExhaustiveWhenHalvingSavesTooLittle) {
  const StrategyChoice choice = choose_strategy(Strategy::automatic, deep_net_few_steps());
  const double exhaustive = estimate_of(choice, Strategy::exhaustive).seconds;
  EXPECT_GT(estimate_of(choice, Strategy::per_layer).seconds, kStrategyTieFactor * exhaustive);
  // Halving's brief rounds save little when --steps is 3: its extra builds eat that up,
  // leaving it within the estimates' error of exhaustive, which wins the tie.
  const double halving = estimate_of(choice, Strategy::halving).seconds;
  EXPECT_LT(halving, exhaustive);
  EXPECT_LE(exhaustive, kStrategyTieFactor * halving);
  EXPECT_EQ(choice.run, Strategy::exhaustive);
  EXPECT_EQ(choice.reason.rfind("auto: exhaustive is within 1.1x of the cheapest (halving)", 0), 0u)
      << choice.reason;
}

TEST(StrategyChoice, ManyCandidatesWithManyStepsGoHalving) {
  CostInputs in = deep_net_few_steps();
  in.candidates = 97;  // e.g. adding threads 1,2,4 and async update on/off
  in.concurrency_variants = 12;
  in.steps = 30;
  const StrategyChoice choice = choose_strategy(Strategy::automatic, in);
  EXPECT_EQ(choice.run, Strategy::halving);
  EXPECT_EQ(choice.reason.rfind("auto: halving has the cheapest estimate", 0), 0u) << choice.reason;
}

// The two nets of the benchmark (docs/BENCHMARKS.md, "Tuner strategies", 2026-12-04),
// with the inputs auto measured there: on LeNet-5 the find is a few steps' worth and
// per-layer measures fewer candidates than exhaustive; on ResNet-18-small its find
// (11 distinct problems x 4 algorithms x 2 layouts) cost about 6 s, a third of the whole
// exhaustive sweep. Unpriced (every candidate at the reference's step, 4 picks per
// layout), per-layer looks 1.3x dearer than exhaustive there.
CostInputs lenet_as_benchmarked() {
  CostInputs in = small_net();
  in.find_seconds = 0.25;
  in.build_seconds = 0.06;
  in.step_seconds = 0.008;
  return in;
}
CostInputs resnet_as_benchmarked() {
  CostInputs in = small_net();
  in.conv_layers = 20;
  in.distinct_problems = 11;
  in.find_seconds = 6.3;
  in.warmup = 1;
  in.steps = 3;
  in.build_seconds = 0.15;
  in.step_seconds = 0.17;
  return in;
}

TEST(StrategyChoice, UnpricedPerLayerLooksDearOnTheResnet) {
  EXPECT_EQ(choose_strategy(Strategy::automatic, lenet_as_benchmarked()).run, Strategy::per_layer);
  const StrategyChoice resnet = choose_strategy(Strategy::automatic, resnet_as_benchmarked());
  EXPECT_NE(resnet.run, Strategy::per_layer) << resnet.reason;
  // 4 algorithms over 11 distinct problems: up to 4 picks per layout, 21 measurements.
  EXPECT_EQ(estimate_of(resnet, Strategy::per_layer).measurements, 1u + 2 * 2 * 5);
  EXPECT_GT(estimate_of(resnet, Strategy::per_layer).seconds,
            1.3 * estimate_of(resnet, Strategy::exhaustive).seconds);
}

// Priced with the steps the quiet benchmark measured (docs/BENCHMARKS.md, "Quiet, three
// tunes per strategy": exhaustive's 16 candidates at 69-268 ex/s against the reference's
// 170 at batch 32; per-layer's picks, nhwc, the mix at 222 ex/s and its two algorithms
// at 215 and 199). Per-layer races its 12 configs and the baseline: each member's build,
// check and 6 rounds (no separate sweep of the baseline, no warm-up steps) cost less
// than exhaustive's sweep with racing, and within the tie factor of halving's, so
// per-layer runs (the default prune margin, 8.5, prunes none of these, so pruned costs
// exhaustive plus the find). With a margin of 67% pruned would measure only the
// baseline (the first) and the 7 candidates priced within it of the fastest (268 ex/s:
// those at 161 ex/s or more).
TEST(StrategyChoice, PricedResnetEstimatesAsMeasuredQuiet) {
  CostInputs in = resnet_as_benchmarked();
  in.build_seconds = 0.28;
  in.step_seconds = 32.0 / 170;
  in.find_seconds = 6.5;
  for (double ex_s : {249, 268, 231, 221, 221, 172, 170, 166, 136, 133, 116, 96, 86, 85, 78, 69})
    in.candidate_step_seconds.push_back(32.0 / ex_s);
  in.per_layer_step_seconds = {32.0 / 222, 32.0 / 215, 32.0 / 199};
  StrategyChoice choice = choose_strategy(Strategy::automatic, in);
  EXPECT_EQ(choice.run, Strategy::per_layer) << choice.reason;
  EXPECT_EQ(estimate_of(choice, Strategy::pruned).measurements, 16u);
  EXPECT_EQ(estimate_of(choice, Strategy::per_layer).measurements, 13u) << "as per-layer measured";
  EXPECT_LT(estimate_of(choice, Strategy::per_layer).seconds,
            estimate_of(choice, Strategy::exhaustive).seconds);
  in.prune_margin = prune_margin_for_error(0.25);
  const StrategyChoice narrower = choose_strategy(Strategy::automatic, in);
  EXPECT_EQ(estimate_of(narrower, Strategy::pruned).measurements, 8u);
}

// A space with per-layer mixes (two or more algorithms over two or more distinct conv
// problems, as cost_inputs finds it) runs per-layer even where its estimate is the
// dearest: the others cannot reach a mix, which was the true best on both nets measured.
TEST(StrategyChoice, MixesGoPerLayerWhateverTheEstimates) {
  CostInputs in = deep_net_few_steps();
  ASSERT_NE(choose_strategy(Strategy::automatic, in).run, Strategy::per_layer);
  in.per_layer_mixes = true;
  const StrategyChoice choice = choose_strategy(Strategy::automatic, in);
  EXPECT_EQ(choice.run, Strategy::per_layer);
  EXPECT_GT(estimate_of(choice, Strategy::per_layer).seconds,
            kStrategyTieFactor * estimate_of(choice, Strategy::exhaustive).seconds);
  EXPECT_EQ(choice.reason.rfind("auto: per-layer, the only strategy that searches per-layer mixes "
                                "(4 algorithms over 18 distinct conv problems",
                                0),
            0u)
      << choice.reason;
  EXPECT_NE(choice.reason.find("estimated before measuring: exhaustive "), std::string::npos);
  // Where per-layer cannot run (--per-layer-product, or a layer no algorithm passes in
  // auto's probe), the estimates decide among the others.
  in.per_layer_allowed = false;
  EXPECT_NE(choose_strategy(Strategy::automatic, in).run, Strategy::per_layer);
}

TEST(StrategyChoice, PerLayerFlipsAwayWhereItsFindOutgrowsTheTie) {
  // The find that puts per-layer exactly at the tie factor times the cheapest other
  // estimate; a little less runs per-layer, a little more runs the other.
  CostInputs in = lenet_as_benchmarked();
  in.find_seconds = 0;
  const auto base = estimate_costs(in);
  const double others = std::min(base[0].seconds, base[2].seconds);
  const double flip = kStrategyTieFactor * others - base[1].seconds;
  ASSERT_GT(flip, 0);
  in.find_seconds = 0.98 * flip;
  EXPECT_EQ(choose_strategy(Strategy::automatic, in).run, Strategy::per_layer);
  in.find_seconds = 1.02 * flip;
  EXPECT_NE(choose_strategy(Strategy::automatic, in).run, Strategy::per_layer);
  // And a cheaper step makes the same find weigh more: the flip moves with the inputs.
  in.find_seconds = 0.98 * flip;
  in.step_seconds /= 2;
  EXPECT_NE(choose_strategy(Strategy::automatic, in).run, Strategy::per_layer);
}

TEST(StrategyChoice, PerLayerWithinTheTieFactorBeatsACheaperExhaustive) {
  CostInputs in = small_net();
  // Per-layer's find made a little dearer than the whole exhaustive sweep's saving.
  const auto base = estimate_costs(in);
  const double gap = base[0].seconds - base[1].seconds;
  in.find_seconds += gap + 0.05 * base[0].seconds;  // per-layer = 1.05x exhaustive
  const StrategyChoice choice = choose_strategy(Strategy::automatic, in);
  ASSERT_LT(estimate_of(choice, Strategy::exhaustive).seconds,
            estimate_of(choice, Strategy::per_layer).seconds);
  EXPECT_EQ(choice.run, Strategy::per_layer);
  EXPECT_NE(choice.reason.find(
                "per-layer is within 1.1x of the cheapest (exhaustive), and ties go to per-layer"),
            std::string::npos)
      << choice.reason;
}

TEST(StrategyChoice, AFullFindIsTheProbePlusTheRepeatedTimedRuns) {
  LayerFind probe;
  probe.timings = {{"direct", 300, "", {}, false},
                   {"gemm", 100, "", {}, false},
                   {"fft-own", 0, "does not support the problem", {}, false}};
  // 2 s of probe (fixed part + one timed run of each algorithm, 0.4 s); 5 repetitions
  // add 4 more rounds of the timed runs only.
  EXPECT_NEAR(find_seconds_of(2.0, probe, 5), 2.0 + 4 * 0.4, 1e-12);
  EXPECT_NEAR(find_seconds_of(2.0, probe, 1), 2.0, 1e-12);
  EXPECT_NEAR(find_seconds_of(2.0, probe, 0), 2.0, 1e-12);  // the find runs at least one
}

TEST(StrategyChoice, PerLayerProductLeavesPerLayerOut) {
  CostInputs in = small_net();
  in.per_layer_allowed = false;
  const StrategyChoice choice = choose_strategy(Strategy::automatic, in);
  EXPECT_EQ(choice.estimates.size(), 2u);
  EXPECT_NE(choice.run, Strategy::per_layer);
}

TEST(StrategyChoice, ARequestedStrategyRunsWithoutEstimates) {
  const StrategyChoice choice = choose_strategy(Strategy::halving, small_net());
  EXPECT_EQ(choice.run, Strategy::halving);
  EXPECT_TRUE(choice.estimates.empty());
  EXPECT_EQ(choice.reason, "requested (strategy halving)");
}

TEST(StrategyChoice, ParsesAutoAndNamesTheKnownOnes) {
  EXPECT_EQ(parse_strategy("auto"), Strategy::automatic);
  EXPECT_EQ(parse_strategy("per-layer"), Strategy::per_layer);
  try {
    parse_strategy("random");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("known: auto, exhaustive, per-layer, halving, pruned"),
              std::string::npos);
  }
}

TEST(StrategyChoice, EstimatesRoundTripThroughJson) {
  const auto estimates = estimate_costs(small_net());
  EXPECT_EQ(estimates_from_json(estimates_to_json(estimates), "<db>"), estimates);
  try {
    estimates_from_json(R"([{"strategy": "random", "seconds": 1, "measurements": 2}])",
                        "results DB x choice 3");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("results DB x choice 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(estimates_from_json("[{", "<db>"), Error);
}

std::vector<ConvLayerInfo> layers_of(const std::string& model) {
  ModelSpec spec;
  spec.name = model;
  spec.input = {2, model == "lenet5" ? 1 : 3, 32, 32};
  return conv_layers(*build_model(spec));
}

SpaceOptions space_options(const std::string& model, std::vector<std::string> algorithms) {
  SpaceOptions o;
  o.model = model;
  o.batch = 2;
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW, Layout::NHWC});
  o.algorithms = std::move(algorithms);
  o.knobs.set(knobs::streams, std::vector<int>{1, 2});
  o.knobs.set(knobs::cpu_binding, std::vector<CpuBinding>{CpuBinding::off});  // streams alone
  return o;
}

TEST(StrategyChoice, InputsOfRealSpacesCountDistinctProblems) {
  const SearchSpace lenet(space_options("lenet5", {"direct", "gemm"}), layers_of("lenet5"));
  const CostInputs l = cost_inputs(lenet, 9, 2, 5, 0.1, 0.01);
  EXPECT_EQ(l.conv_layers, 2u);
  EXPECT_EQ(l.distinct_problems, 2u);
  EXPECT_EQ(l.layout_thread_pairs, 2u);
  EXPECT_EQ(l.concurrency_variants, 2u);
  EXPECT_EQ(l.algorithms, 2u);
  EXPECT_EQ(l.find_seconds, 0);

  const SearchSpace resnet(space_options("resnet18-small", {"direct", "gemm"}),
                           layers_of("resnet18-small"));
  const CostInputs r = cost_inputs(resnet, 9, 2, 5, 0.1, 0.01);
  EXPECT_GT(r.conv_layers, 10u);
  EXPECT_LT(r.distinct_problems, r.conv_layers);  // the repeated blocks

  // Mixes: two algorithms over two distinct problems; none with one algorithm.
  EXPECT_TRUE(l.per_layer_mixes);
  EXPECT_TRUE(r.per_layer_mixes);
  const SearchSpace one(space_options("lenet5", {"gemm"}), layers_of("lenet5"));
  EXPECT_FALSE(cost_inputs(one, 5, 2, 5, 0.1, 0.01).per_layer_mixes);
}

TEST(StrategyChoice, TheFindEstimateCoversEveryProblemLayoutAndRepetition) {
  // test-slow sleeps 20 ms in each of its 3 passes: a find runs it (1 + repetitions)
  // times per distinct problem and layout, so the find takes at least that long, and
  // the estimate, scaled from two problems' probe, must say so.
  SpaceOptions o = space_options("lenet5", {"direct", test_support::kSlow});
  FindOptions find;
  find.repetitions = 2;
  const SearchSpace space(o, layers_of("lenet5"));
  const double slept = 2.0 /*problems*/ * 2 /*layouts*/ * (1 + find.repetitions) * 0.060;
  EXPECT_GE(probe_find(space, find).find_seconds, 0.95 * slept);
}

// The probe also times each algorithm on the two problems, test-slow 60 ms slower than
// direct on each: its line prices a config with it that much slower per conv layer. The
// probe runs the find's 5 repetitions here (as where per-layer will run), so each figure
// is a median of 5 and direct's own run-to-run noise (a few ms under a sanitizer) stays
// within the 10 % allowed.
TEST(StrategyChoice, ThePriceOfAnAlgorithmFollowsItsProbeTimings) {
  SpaceOptions o = space_options("lenet5", {"direct", test_support::kSlow});
  const SearchSpace space(o, layers_of("lenet5"));
  const FindProbe probe = probe_find(space, FindOptions{}, {}, /*at_find_repetitions=*/true);
  ASSERT_EQ(probe.ms.size(), 2u);
  for (double flops : {probe.least_flops, probe.most_flops})
    EXPECT_GE(
        algorithm_ms(probe, test_support::kSlow, flops) - algorithm_ms(probe, "direct", flops),
        0.9 * 60);
  EXPECT_EQ(algorithm_ms(probe, "gemm", probe.least_flops), -1) << "not probed";

  CostInputs in = cost_inputs(space, 2, 0, 1, 0.1, 0.5);
  const std::vector<RunConfig> runnable = {
      space.global(Layout::NCHW, 1, "direct").config,
      space.global(Layout::NCHW, 1, test_support::kSlow).config};
  price_steps(in, space, runnable, "direct", probe);
  ASSERT_EQ(in.candidate_step_seconds.size(), 2u);
  EXPECT_NEAR(in.candidate_step_seconds[0], 0.5, 1e-9) << "the reference steps at its timed step";
  EXPECT_GE(in.candidate_step_seconds[1] - 0.5, 0.95 * 2 * 0.060)
      << "two conv layers, 60 ms more each";
  // direct wins both layers: per-layer measures direct's uniform config only.
  ASSERT_EQ(in.per_layer_step_seconds.size(), 1u);
  EXPECT_NEAR(in.per_layer_step_seconds[0], 0.5, 1e-9);
}

// Lines that cross: gemm is faster on the small problem, fft-own on the large one.
TEST(StrategyChoice, PerLayerPricesItsMixAndEachPickedAlgorithm) {
  const SearchSpace space(space_options("lenet5", {"direct", "gemm", "fft-own"}),
                          layers_of("lenet5"));
  ASSERT_EQ(space.layers().size(), 2u);
  FindProbe probe;
  probe.least_flops =
      std::min(space.layers()[0].problem.flops(), space.layers()[1].problem.flops());
  probe.most_flops = std::max(space.layers()[0].problem.flops(), space.layers()[1].problem.flops());
  probe.ms = {{"direct", {10, 100}}, {"gemm", {4, 80}}, {"fft-own", {8, 40}}};
  CostInputs in = cost_inputs(space, 1, 0, 1, 0.1, 1.0);
  price_steps(in, space, {space.global(Layout::NCHW, 1, "direct").config}, "direct", probe);
  // The mix (gemm 4 + fft-own 40 ms against direct's 110), then fft-own (48) and gemm (84).
  ASSERT_EQ(in.per_layer_step_seconds.size(), 3u);
  EXPECT_NEAR(in.per_layer_step_seconds[0], 1.0 - 0.066, 1e-9);
  EXPECT_NEAR(in.per_layer_step_seconds[1], 1.0 - 0.062, 1e-9);
  EXPECT_NEAR(in.per_layer_step_seconds[2], 1.0 - 0.026, 1e-9);
}

// Priced steps: exhaustive pays each candidate's step, halving's later rounds the fastest
// candidates', per-layer its configs'.
TEST(StrategyChoice, PricedStepsWeighEachMeasurement) {
  CostInputs in = small_net();
  in.candidate_step_seconds.assign(17, 0.025);
  for (size_t i = 9; i < 17; ++i) in.candidate_step_seconds[i] = 0.1;  // eight slow candidates
  in.per_layer_step_seconds = {0.02, 0.025};                           // two configs per pair
  const std::vector<StrategyEstimate> e = estimate_costs(in);
  auto at = [&](int64_t steps, int checks, double step) {
    return 0.3 + (checks + 3 + steps) * step;
  };
  const double remeasure = 2 * at(10, 1, 0.025);
  EXPECT_NEAR(e[0].seconds, 9 * at(10, 1, 0.025) + 8 * at(10, 1, 0.1) + remeasure, 1e-9);
  EXPECT_EQ(e[0].measurements, 17u);
  EXPECT_EQ(e[1].measurements, 1u + 2 * 2 * 2);
  // The find and the race of the baseline and the 8 configs, each built and checked (no
  // warm-up): the fastest two timed for 10 rounds, the others for 5 (the separation
  // test's first look).
  auto raced = [](double step, int rounds) { return 0.3 + (1 + rounds) * step; };
  EXPECT_NEAR(e[1].seconds, 2.5 + 2 * raced(0.02, 10) + 2 * raced(0.02, 5) + 5 * raced(0.025, 5),
              1e-9);
  // Round 0 measures all 17 at 2 steps; the 6 and 2 kept are fast ones.
  EXPECT_NEAR(e[2].seconds,
              9 * at(2, 1, 0.025) + 8 * at(2, 1, 0.1) + 6 * at(4, 0, 0.025) + 2 * at(10, 0, 0.025) +
                  remeasure,
              1e-9);
}

TEST(StrategyChoice, AdaptiveTimingPricesTheStepsTheIntervalNeedsWithinTheCaps) {
  CostInputs in = small_net();            // steps 10, step 25 ms
  EXPECT_EQ(timed_steps(in, 0.025), 10);  // max_steps 0: a fixed count
  in.max_steps = 200;
  in.delta = 0.02;
  in.step_spread = 0.1;  // (1.92 x 0.1 / 0.02)^2 = 92.2
  EXPECT_EQ(timed_steps(in, 0.025), 93);
  in.step_spread = 0;  // no noise: the minimum, at least the 6 an interval needs
  EXPECT_EQ(timed_steps(in, 0.025), 10);
  in.steps = 2;
  EXPECT_EQ(timed_steps(in, 0.025), 6);
  in.steps = 10;
  in.step_spread = 1.0;  // 9217 wanted: --max-steps caps it
  EXPECT_EQ(timed_steps(in, 0.025), 200);
  in.max_timing_seconds = 1;  // 40 steps of 25 ms
  EXPECT_EQ(timed_steps(in, 0.025), 40);
  EXPECT_EQ(timed_steps(in, 0.5), 10);  // the cap never goes below the minimum

  // Exhaustive: every candidate's measurement at those steps, plus two for the final rounds.
  in.max_timing_seconds = 0;
  in.step_spread = 0.1;
  const double measurement = in.build_seconds + (1 + in.warmup + 93) * in.step_seconds;
  EXPECT_NEAR(estimate_costs(in).front().seconds, (17 + 2) * measurement, 1e-9);
}

TEST(StrategyChoice, RacingPricesASlowerCandidateAtItsFirstIntervalAndOneChunk) {
  CostInputs in = small_net();  // steps 10, warm-up 3, build 0.3 s
  in.max_steps = 200;
  in.step_spread = 0.1;  // 93 steps in full (previous test)
  in.racing = true;
  EXPECT_EQ(raced_out_steps(in), 12);  // 10, then a chunk of 2
  auto cost = [&](double step, int64_t timed) {
    return in.build_seconds + (1 + in.warmup + timed) * step;
  };
  // The leader first; a candidate twice as slow races out; one within the noise does not.
  EXPECT_NEAR(sweep_seconds(in, {0.01, 0.02, 0.0101}, true),
              cost(0.01, 93) + cost(0.02, 12) + cost(0.0101, 93), 1e-9);
  // A slow candidate before any faster one has no leader to race against.
  EXPECT_NEAR(sweep_seconds(in, {0.02, 0.01}, true), cost(0.02, 93) + cost(0.01, 93), 1e-9);
  in.racing = false;
  EXPECT_NEAR(sweep_seconds(in, {0.01, 0.02}, true), cost(0.01, 93) + cost(0.02, 93), 1e-9);
}

}  // namespace
}  // namespace tunescope::tuner

namespace tunescope::tuner {
namespace {

// Priced steps: the baseline at 0.1 s, two candidates near the fastest, the rest far slower.
CostInputs priced_wide_space() {
  CostInputs in;
  in.layout_thread_pairs = 4;
  in.concurrency_variants = 4;
  in.algorithms = 4;
  in.conv_layers = 2;
  in.distinct_problems = 2;
  in.find_seconds = 1;
  in.warmup = 1;
  in.steps = 5;
  in.build_seconds = 0.2;
  in.step_seconds = 0.1;
  in.candidate_step_seconds = {0.1, 0.05, 0.06};
  for (int i = 0; i < 45; ++i) in.candidate_step_seconds.push_back(0.3);
  in.candidates = in.candidate_step_seconds.size();
  in.per_layer_step_seconds = {0.05, 0.06, 0.05};
  in.prune_margin = 0.5;
  return in;
}

TEST(StrategyChoice, PrunedMeasuresTheBaselineAndTheCandidatesPricedWithinTheMargin) {
  const CostInputs in = priced_wide_space();
  const std::vector<StrategyEstimate> e = estimate_costs(in);
  ASSERT_EQ(e.size(), 4u);
  ASSERT_EQ(e[3].strategy, Strategy::pruned);
  auto measurement = [&](double step) { return 0.2 + (1 + 1 + 5) * step; };
  // 0.05 x 1.5 = 0.075: the baseline (0.1, always measured), 0.05 and 0.06.
  EXPECT_EQ(e[3].measurements, 3u);
  EXPECT_NEAR(e[3].seconds,
              1 + measurement(0.1) + measurement(0.05) + measurement(0.06) + 2 * measurement(0.1),
              1e-9);
  // per-layer measures its 3 configs in each of 4 pairs x 4 variants: pruned is cheaper, and auto
  // runs it.
  const StrategyChoice choice = choose_strategy(Strategy::automatic, in);
  EXPECT_EQ(choice.run, Strategy::pruned) << choice.reason;
  EXPECT_EQ(parse_strategy("pruned"), Strategy::pruned);
}

TEST(StrategyChoice, NoPrunedEstimateWithoutPricesOrAFind) {
  CostInputs in = priced_wide_space();
  in.candidate_step_seconds.clear();
  in.per_layer_step_seconds.clear();
  for (const StrategyEstimate& e : estimate_costs(in)) EXPECT_NE(e.strategy, Strategy::pruned);
  in = priced_wide_space();
  in.per_layer_allowed = false;
  for (const StrategyEstimate& e : estimate_costs(in)) EXPECT_NE(e.strategy, Strategy::pruned);
}

}  // namespace
}  // namespace tunescope::tuner
