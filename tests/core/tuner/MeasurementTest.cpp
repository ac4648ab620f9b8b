// Measurement dispositions: ok with figures and kernels, invalid for a wrong algorithm
// (never timed), failed for a throwing one and a NaN loss; numerics comparison; figures.
#include "core/tuner/Measurement.h"
#include "core/tuner/TrialRunner.h"

#include <gtest/gtest.h>

#include <cmath>

#include "TestAlgorithms.h"
#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/Ranking.h"

namespace tunescope::tuner {
namespace {

using test_support::config_with;

// Two timed steps, a fixed count: the minimum is the maximum.
MeasureOptions quick() {
  MeasureOptions o;
  o.warmup = 1;
  o.steps = 2;
  o.max_steps = 2;
  return o;
}

class MeasurementTest : public ::testing::Test {
 protected:
  SessionOptions base = test_support::tiny_session();
  NumericsSample reference = reference_numerics(base, quick());
};

TEST_F(MeasurementTest, CorrectCandidateIsOkWithFiguresKernelsAndTrace) {
  for (const char* algorithm : {"direct", "gemm", "fft-fftw"})
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      const TrialResult r = measure(base, config_with(base, layout, algorithm), reference, quick());
      ASSERT_EQ(r.status, TrialStatus::ok)
          << algorithm << " " << to_string(layout) << ": " << r.reason;
      EXPECT_EQ(r.figures.steps, 2);
      EXPECT_GT(r.figures.median_eps, 0);
      EXPECT_GT(r.figures.min_step_ms, 0);
      EXPECT_LE(r.figures.min_step_ms, r.figures.median_step_ms);
      ASSERT_FALSE(r.kernels.empty());
      ASSERT_TRUE(r.trace);
      bool conv_kernel = false;
      for (const auto& a : r.trace->activities)
        conv_kernel |= a.name.str().rfind(std::string(algorithm) + ".", 0) == 0;
      EXPECT_TRUE(conv_kernel) << algorithm
                               << ": the trace shows no kernel of the candidate's algorithm";
    }
}

TEST_F(MeasurementTest, TimedStepsRunInsideACandidateRangeNamedByTheConfig) {
  const RunConfig config = config_with(base, Layout::NHWC, "gemm");
  const TrialResult r = measure(base, config, reference, quick());
  ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
  ASSERT_TRUE(r.trace);
  std::vector<profiler::Range> candidates, steps;
  for (const auto& range : r.trace->ranges) {
    if (range.category == profiler::RangeCategory::candidate) candidates.push_back(range);
    if (range.name == "train_step") steps.push_back(range);
  }
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates.front().name, config.label());
  ASSERT_EQ(steps.size(), 2u);
  for (const auto& step : steps) {  // every timed step lies within it
    EXPECT_LE(candidates.front().start_ns, step.start_ns);
    EXPECT_GE(candidates.front().end_ns, step.end_ns);
  }
}

TEST_F(MeasurementTest, InterleavedStepsEachRunInTheirCandidatesRange) {
  const std::vector<RunConfig> configs{config_with(base, Layout::NCHW, "direct"),
                                       config_with(base, Layout::NHWC, "gemm"),
                                       config_with(base, Layout::NHWC, "direct")};
  MeasureOptions o = quick();
  o.max_steps = 9;
  size_t asked = 0;
  const auto results =
      measure_interleaved(base, configs, {&reference, &reference, &reference}, o,
                          [&](const std::vector<std::vector<double>>& rounds) {
                            ++asked;
                            for (const auto& series : rounds)
                              EXPECT_EQ(series.size(), rounds[0].size());
                            return rounds[0].size() == 7;  // settled after the 7th round
                          });
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(asked, 2u) << "asked after each round from the 6th (the sign-flip test's minimum) on";
  for (const TrialResult& r : results) {
    ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
    EXPECT_EQ(r.figures.steps, 7);
    EXPECT_EQ(r.step_seconds.size(), 7u);
    EXPECT_EQ(r.figures.stop, StopRule::interleaved);
    EXPECT_EQ(r.reason.rfind(kRemeasureReason, 0), 0u) << r.reason;
    ASSERT_TRUE(r.trace);
    size_t ranges = 0;
    for (const auto& range : r.trace->ranges)
      if (range.category == profiler::RangeCategory::candidate) {
        ++ranges;
        EXPECT_EQ(range.name, r.config.label());
      }
    EXPECT_EQ(ranges, 7u) << "one range per round-robin timed step";
  }
  // Never settled: the cap (max_steps rounds) ends the rounds.
  const auto capped =
      measure_interleaved(base, {configs[0], configs[1]}, {&reference, &reference}, o,
                          [](const std::vector<std::vector<double>>&) { return false; });
  for (const TrialResult& r : capped) EXPECT_EQ(r.figures.steps, 9) << r.reason;
}

// With turn_steps timed steps a turn, a member's round time is their mean: one value per
// round in its figures and step_seconds (not one per step), its CPU time kept per step,
// and (settle + turn_steps) iterations per round in its trace.
TEST_F(MeasurementTest, InterleavedTurnsOfSeveralStepsGiveOneValuePerRound) {
  const std::vector<RunConfig> configs{config_with(base, Layout::NCHW, "direct"),
                                       config_with(base, Layout::NHWC, "gemm")};
  MeasureOptions o = quick();
  o.max_steps = 6;
  o.settle_steps = 1;
  o.settle_until_negligible = false;
  o.turn_steps = 3;
  size_t looks = 0;
  const auto results = measure_interleaved(base, configs, {&reference, &reference}, o,
                                           [&](const std::vector<std::vector<double>>& rounds) {
                                             ++looks;
                                             EXPECT_EQ(rounds[0].size(), 5 + looks);
                                             return false;
                                           });
  EXPECT_EQ(looks, 1u) << "asked after the 6th round, the cap";
  for (const TrialResult& r : results) {
    ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
    EXPECT_EQ(r.figures.steps, 6);
    EXPECT_EQ(r.step_seconds.size(), 6u);
    EXPECT_EQ(r.step_cpu_seconds.size(), 6u * 3);
    ASSERT_TRUE(r.trace);
    size_t iterations = 0;
    for (const auto& range : r.trace->ranges)
      if (range.category == profiler::RangeCategory::iteration) ++iterations;
    EXPECT_EQ(iterations, 6u * (1 + 3));
  }
}

// Each turn of the rounds starts with settle_steps untimed steps in the same call as its
// timed step (the first step after another member's turn pays for what that member left
// cold): a member's trace has (1 + settle_steps) training iterations per round, one
// timed step per round in its figures, and no settle step without settle_steps.
TEST_F(MeasurementTest, InterleavedTurnsStartWithUntimedSettleSteps) {
  const std::vector<RunConfig> configs{config_with(base, Layout::NCHW, "direct"),
                                       config_with(base, Layout::NCHW, "gemm")};
  for (int64_t settle : {0, 2}) {
    MeasureOptions o = quick();
    o.max_steps = 7;
    o.settle_steps = settle;
    o.settle_until_negligible = false;  // every turn settles, however small its cold start
    const auto results =
        measure_interleaved(base, configs, {&reference, &reference}, o,
                            [](const std::vector<std::vector<double>>&) { return false; });
    for (const TrialResult& r : results) {
      ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
      EXPECT_EQ(r.figures.steps, 7);
      EXPECT_EQ(r.step_seconds.size(), 7u);
      ASSERT_TRUE(r.trace);
      size_t iterations = 0;
      for (const auto& range : r.trace->ranges)
        if (range.category == profiler::RangeCategory::iteration) ++iterations;
      EXPECT_EQ(iterations, static_cast<size_t>(7 * (1 + settle))) << "settle " << settle;
    }
  }
}

// A race in rounds: a member whose numerics differ is invalid and never timed while the
// others race on; a member the drop callback names is timed no more and ends raced out
// with the rounds it ran, the rest go on to the cap.
TEST_F(MeasurementTest, InterleavedRaceDropsMembersAndKeepsAWrongOneOut) {
  const std::vector<RunConfig> configs{config_with(base, Layout::NCHW, "direct"),
                                       config_with(base, Layout::NCHW, test_support::kWrong),
                                       config_with(base, Layout::NHWC, "gemm"),
                                       config_with(base, Layout::NHWC, "direct")};
  MeasureOptions o = quick();
  o.max_steps = 9;
  std::vector<size_t> lengths_at_second_look;
  size_t looks = 0, first_settled_look = 0;
  const auto results = measure_interleaved(
      base, configs, {&reference, &reference, &reference, &reference}, o,
      [&](const std::vector<std::vector<double>>& rounds) {
        if (!first_settled_look) first_settled_look = rounds.front().size();
        return false;
      },
      [&](const std::vector<std::vector<double>>& rounds) -> std::vector<size_t> {
        if (++looks == 2)
          for (const auto& series : rounds) lengths_at_second_look.push_back(series.size());
        return looks == 1 ? std::vector<size_t>{3} : std::vector<size_t>{};
      });
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[1].status, TrialStatus::invalid);
  EXPECT_EQ(results[1].reason.rfind(kRemeasureReason, 0), 0u) << results[1].reason;
  EXPECT_NE(results[1].reason.find("loss"), std::string::npos) << results[1].reason;
  EXPECT_EQ(results[1].figures.steps, 0);
  for (size_t i : {0u, 2u}) {
    ASSERT_EQ(results[i].status, TrialStatus::ok) << results[i].reason;
    EXPECT_EQ(results[i].figures.stop, StopRule::interleaved);
    EXPECT_EQ(results[i].figures.steps, 9);
  }
  ASSERT_EQ(results[3].status, TrialStatus::ok) << results[3].reason;
  EXPECT_EQ(results[3].figures.stop, StopRule::raced_out);
  // The first look for drops comes after the 5th round (the separation test's first,
  // kEarliestSeparationLook), before the 6 the settled test waits for.
  EXPECT_EQ(results[3].figures.steps, 5) << "dropped at the first look, after the 5th round";
  EXPECT_EQ(results[3].step_seconds.size(), 5u);
  // At the next look the racing members have one round more than the dropped one, and
  // the wrong one none.
  EXPECT_EQ(lengths_at_second_look, (std::vector<size_t>{6, 0, 6, 5}));
  EXPECT_EQ(first_settled_look, 6u) << "the settled test waits for the sign flips' minimum";
  EXPECT_EQ(racing_members({std::vector<double>(7, 1.0),
                            {},
                            std::vector<double>(7, 1.0),
                            std::vector<double>(6, 1.0)}),
            (std::vector<size_t>{0, 2}));
}

// Adaptive timing on real steps: a stopping rule that cannot be met runs to the cap; a
// leader far faster than any real step races the candidate out once its interval
// exists (6 steps), one far slower never does.
TEST_F(MeasurementTest, AdaptiveTimingStopsAtTheCapOrWhenRacedOut) {
  const RunConfig config = config_with(base, Layout::NCHW, "gemm");
  MeasureOptions o = quick();
  o.steps = 3;
  o.max_steps = 12;
  o.delta = 1e-9;  // no real interval is that narrow
  TrialResult r = measure(base, config, reference, o);
  ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
  EXPECT_EQ(r.figures.steps, 12);
  EXPECT_EQ(r.figures.stop, StopRule::max_steps);
  EXPECT_TRUE(r.figures.has_interval());
  EXPECT_LE(r.figures.eps_low, r.figures.median_eps);
  EXPECT_GE(r.figures.eps_high, r.figures.median_eps);

  o.max_timing_seconds = 1e-6;  // spent by the first chunk
  r = measure(base, config, reference, o);
  EXPECT_EQ(r.figures.stop, StopRule::time_cap);
  EXPECT_EQ(r.figures.steps, 3);

  o.max_timing_seconds = 10;
  o.race_against = QuantileEstimate{10, 1e-9, 0.9e-9, 1.1e-9, true};
  r = measure(base, config, reference, o);
  ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
  EXPECT_EQ(r.figures.stop, StopRule::raced_out);
  EXPECT_GE(r.figures.steps, 6);
  EXPECT_LT(r.figures.steps, 12);

  o.race_against = QuantileEstimate{10, 1000, 900, 1100, true};
  r = measure(base, config, reference, o);
  EXPECT_EQ(r.figures.stop, StopRule::max_steps);
}

TEST_F(MeasurementTest, AQuietCandidateConvergesWithinTheCap) {
  // A delta so wide (+-500x) that the interval is within it as soon as it exists, even
  // with a step stalled by the loaded machine: 6 steps, the median's minimum.
  MeasureOptions o = quick();
  o.steps = 2;
  o.max_steps = 50;
  o.delta = 1000;
  const TrialResult r = measure(base, config_with(base, Layout::NCHW, "gemm"), reference, o);
  ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
  EXPECT_EQ(r.figures.stop, StopRule::converged);
  EXPECT_EQ(r.figures.steps, 6);
}

TEST_F(MeasurementTest, NumericsCheckCanBeLeftOutForAConfigCheckedBefore) {
  const RunConfig config = config_with(base, Layout::NCHW, test_support::kWrong);
  MeasureOptions unchecked = quick();
  unchecked.check_numerics = false;
  // Without the check a wrong candidate is timed: the flag really leaves the check out,
  // which is why only configs that passed it before may use it.
  const TrialResult r = measure(base, config, reference, unchecked);
  EXPECT_EQ(r.status, TrialStatus::ok) << r.reason;
  EXPECT_FALSE(r.numerics_checked);
  EXPECT_EQ(r.figures.steps, 2);
  const TrialResult checked = measure(base, config, reference, quick());
  EXPECT_EQ(checked.status, TrialStatus::invalid);
  EXPECT_TRUE(checked.numerics_checked);
}

TEST_F(MeasurementTest, WrongAlgorithmIsInvalidAndNotTimed) {
  const TrialResult r =
      measure(base, config_with(base, Layout::NCHW, test_support::kWrong), reference, quick());
  EXPECT_EQ(r.status, TrialStatus::invalid) << r.reason;
  EXPECT_NE(r.reason.find("loss"), std::string::npos) << r.reason;
  EXPECT_EQ(r.figures.steps, 0);
  EXPECT_FALSE(r.trace);
}

TEST_F(MeasurementTest, ThrowingAlgorithmIsFailedWithTheReason) {
  const TrialResult thrown =
      measure(base, config_with(base, Layout::NCHW, test_support::kThrows), reference, quick());
  EXPECT_EQ(thrown.status, TrialStatus::failed);
  EXPECT_NE(thrown.reason.find("deliberate failure"), std::string::npos) << thrown.reason;
}

TEST_F(MeasurementTest, NanConvOutputIsNeverOk) {
  // NaN conv outputs reach the loss (ReLU keeps NaN), so the candidate fails or is invalid.
  const TrialResult nan =
      measure(base, config_with(base, Layout::NHWC, test_support::kNan), reference, quick());
  EXPECT_NE(nan.status, TrialStatus::ok);
  EXPECT_FALSE(nan.reason.empty());
}

TEST_F(MeasurementTest, DivergingCandidateIsFailedWithTheNanLoss) {
  SessionOptions diverging = base;
  diverging.sgd.learning_rate =
      1e30f;  // step 1 matches (loss precedes the update); step 2 is not finite
  const NumericsSample ref = reference_numerics(diverging, quick());
  const TrialResult r =
      measure(diverging, config_with(diverging, Layout::NCHW, "gemm"), ref, quick());
  EXPECT_EQ(r.status, TrialStatus::failed);
  EXPECT_NE(r.reason.find("loss is"), std::string::npos) << r.reason;
}

TEST_F(MeasurementTest, UnbuildableCandidateIsFailedNotThrown) {
  RunConfig c = config_with(base, Layout::NCHW, "direct");
  c.conv.per_layer["conv9"] = "gemm";  // lenet5 has no such layer
  const TrialResult r = measure(base, c, reference, quick());
  EXPECT_EQ(r.status, TrialStatus::failed);
  EXPECT_NE(r.reason.find("conv9"), std::string::npos) << r.reason;
}

// The reference is the backend's default conv algorithm: the CPU's direct on cpu, and
// (in CUDA builds) cuDNN's implicit GEMM on cuda, which has no direct.
TEST(Reference, IsTheBackendsDefaultConvAlgorithmOnOneLaneInNchw) {
  SessionOptions base;
  base.backend = "cpu";
  knobs::layout.set(base.knobs, Layout::NHWC);
  base.conv = parse_conv_choice("gemm,conv1=fft-own");
  knobs::streams.set(base.knobs, 2);
  const RunConfig reference = reference_config(base);
  EXPECT_EQ(reference.layout(), Layout::NCHW);
  EXPECT_EQ(reference.conv.str(), "direct");
  EXPECT_EQ(reference.concurrency(), Concurrency{});
  EXPECT_TRUE(knobs::fuse.get(reference.knobs)) << "fusion as the base has it (on by default)";
  EXPECT_EQ(reference_conv_algorithm("cpu"), "direct");
#ifdef TUNESCOPE_HAVE_CUDA
  EXPECT_EQ(reference_conv_algorithm("cuda"), "cudnn:implicit_gemm");
#endif
}

TEST(Numerics, ComparisonCatchesLossAndGradientDifferences) {
  NumericsSample ref{2.0, {{"conv1.weight", {1.0f, -2.0f, 0.5f}}}, nullptr};
  const MeasureOptions o;
  EXPECT_EQ(compare_numerics(ref, ref, o), "");
  NumericsSample close = ref;
  close.gradients[0].values[1] = -2.001f;  // 5e-4 of max |ref|: reassociation-sized
  EXPECT_EQ(compare_numerics(ref, close, o), "");
  NumericsSample grad = ref;
  grad.gradients[0].values[2] = 0.7f;  // relative L2 error 0.2 / ||(1, -2, 0.5)|| = 0.087
  const std::string why = compare_numerics(ref, grad, o);
  EXPECT_NE(why.find("gradient of conv1.weight"), std::string::npos) << why;
  EXPECT_NE(why.find("relative L2 error 0.087"), std::string::npos) << why;
  EXPECT_NE(why.find("tolerance 0.03"), std::string::npos) << why;
  NumericsSample loss = ref;
  loss.loss = 2.01;
  EXPECT_NE(compare_numerics(ref, loss, o)
                .find("loss 2.01 differs from the reference's 2: relative error 0.005"),
            std::string::npos)
      << compare_numerics(ref, loss, o);
  NumericsSample nan = ref;
  nan.gradients[0].values[0] = std::nanf("");
  EXPECT_NE(compare_numerics(ref, nan, o), "");
}

// The error is normalised by the tensor's norm: an entry near zero (a sum that cancels)
// may be off by 200% of itself without failing a tensor that is right as a whole.
TEST(Numerics, SmallEntriesDoNotDecideTheGradientError) {
  NumericsSample ref{2.0, {{"bn1.beta", {1.0f, -2.0f, 0.5f, 1e-4f}}}, nullptr};
  NumericsSample got = ref;
  got.gradients[0].values[3] = 3e-4f;
  EXPECT_EQ(compare_numerics(ref, got, MeasureOptions{}), "");
}

TEST(Numerics, RelativeL2Error) {
  EXPECT_DOUBLE_EQ(relative_l2_error({3, 4}, {3, 4}), 0);
  EXPECT_NEAR(relative_l2_error({3, 4}, {3.3f, 4.4f}), 0.1, 1e-6);
  EXPECT_EQ(relative_l2_error({0, 0}, {0, 0}), 0);
  EXPECT_TRUE(std::isinf(relative_l2_error({0, 0}, {0, 1e-30f})));
  EXPECT_TRUE(std::isinf(relative_l2_error({1, 2}, {1, std::nanf("")})));
}

TEST(Figures, MedianMinAndSpreadOfStepTimes) {
  // 10 steps of 10..19 ms at batch 8.
  std::vector<double> seconds;
  for (int i = 19; i >= 10; --i) seconds.push_back(i / 1000.0);
  const TimingFigures f = figures_of(seconds, 8);
  EXPECT_EQ(f.steps, 10);
  EXPECT_NEAR(f.median_step_ms, 14.5, 1e-9);
  EXPECT_NEAR(f.min_step_ms, 10.0, 1e-9);
  EXPECT_NEAR(f.median_eps, 8 / 0.0145, 1e-6);
  EXPECT_NEAR(f.spread, (18.1 - 10.9) / 14.5, 1e-9);  // interpolated p90 and p10
  // The median's 95% interval of 10 steps is x(2)..x(9): 11 and 18 ms.
  EXPECT_NEAR(f.eps_low, 8 / 0.018, 1e-6);
  EXPECT_NEAR(f.eps_high, 8 / 0.011, 1e-6);
  EXPECT_EQ(figures_of(seconds, 8, StopRule::converged).stop, StopRule::converged);
  const QuantileEstimate back = f.step_interval(8);
  EXPECT_NEAR(back.low, 0.011, 1e-12);
  EXPECT_NEAR(back.high, 0.018, 1e-12);
  EXPECT_FALSE(figures_of({0.01, 0.02}, 8).has_interval());  // too few steps for one
  EXPECT_EQ(figures_of({}, 8).steps, 0);
}

TEST(TrialStatusNames, RoundTrip) {
  for (TrialStatus s :
       {TrialStatus::ok, TrialStatus::invalid, TrialStatus::failed, TrialStatus::skipped})
    EXPECT_EQ(parse_trial_status(to_string(s)), s);
  EXPECT_THROW(parse_trial_status("great"), Error);
}

}  // namespace
}  // namespace tunescope::tuner
