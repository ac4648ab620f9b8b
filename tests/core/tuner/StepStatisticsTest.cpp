// The statistics of adaptive timing on synthetic step times: binomial tails, the
// order-statistic interval, the stopping rule, racing and the sign-flip test. The
// expected values were computed by hand with exact binomial sums (Python's math.comb;
// scipy is not installed here); the n = 20 and n = 100 median intervals match the
// published tables of distribution-free confidence intervals for the median.
#include "core/tuner/StepStatistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/base/Error.h"

namespace tunescope::tuner {
namespace {

// Feeds `sample` one step at a time to the stopping rule: the count it stops at and why.
std::pair<size_t, StopRule> stop_point(const std::vector<double>& sample,
                                       const StoppingRule& rule) {
  std::vector<double> so_far;
  for (double s : sample) {
    so_far.push_back(s);
    if (const auto stop = should_stop(so_far, rule)) return {so_far.size(), *stop};
  }
  return {so_far.size(), StopRule::none};
}

// 1 +- amplitude, deterministic and spread evenly over the range (multiples of 7919
// modulo the prime 10007 visit every residue once), so the median is ~1 and the
// density near it is flat.
std::vector<double> jittered(size_t n, double amplitude) {
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(1 + amplitude * (static_cast<double>((i * 7919 + 11) % 10007) / 5003 - 1));
  return out;
}

TEST(StepStatistics, BinomialTailsMatchExactSums) {
  EXPECT_DOUBLE_EQ(binomial_cdf(0, 6, 0.5), 1.0 / 64);
  EXPECT_NEAR(binomial_cdf(2, 10, 0.5), 56.0 / 1024, 1e-15);
  EXPECT_NEAR(binomial_cdf(3, 20, 0.25), 0.22515604766431352, 1e-13);
  EXPECT_EQ(binomial_cdf(-1, 10, 0.5), 0);
  EXPECT_EQ(binomial_cdf(10, 10, 0.5), 1);
  // Large n: no overflow of the coefficient, no underflow to a wrong 0.
  EXPECT_NEAR(
      binomial_cdf(5000, 10000, 0.5),
      0.5 + 0.5 * std::exp(std::lgamma(10001.0) - 2 * std::lgamma(5001.0) - 10000 * std::log(2.0)),
      1e-9);
}

TEST(StepStatistics, MedianIntervalRanksMatchTheTables) {
  EXPECT_FALSE(order_statistic_ranks(5, 0.5, 0.95));  // 2 x 1/32 > 5%: no 95% interval from 5 steps
  EXPECT_EQ(order_statistic_ranks(6, 0.5, 0.95), (std::pair<size_t, size_t>(0, 5)));
  EXPECT_EQ(order_statistic_ranks(10, 0.5, 0.95), (std::pair<size_t, size_t>(1, 8)));
  EXPECT_EQ(order_statistic_ranks(20, 0.5, 0.95),
            (std::pair<size_t, size_t>(5, 14)));  // x(6), x(15)
  EXPECT_EQ(order_statistic_ranks(100, 0.5, 0.95),
            (std::pair<size_t, size_t>(39, 60)));  // x(40), x(61)
  EXPECT_TRUE(order_statistic_ranks(kMinStepsForInterval, kStepQuantile, kConfidence));
  EXPECT_FALSE(order_statistic_ranks(kMinStepsForInterval - 1, kStepQuantile, kConfidence));
  EXPECT_FALSE(order_statistic_ranks(12, 0.25, 0.95));
  EXPECT_EQ(order_statistic_ranks(40, 0.25, 0.95), (std::pair<size_t, size_t>(4, 16)));
}

TEST(StepStatistics, EstimateHasTheOrderStatisticsAsItsInterval) {
  const QuantileEstimate e = estimate_quantile({9, 1, 8, 2, 7, 3, 6, 4, 5, 10});
  EXPECT_DOUBLE_EQ(e.estimate, 5.5);
  EXPECT_TRUE(e.bounded());
  EXPECT_DOUBLE_EQ(e.low, 2);   // x(2) of 10
  EXPECT_DOUBLE_EQ(e.high, 9);  // x(9)
  EXPECT_DOUBLE_EQ(e.relative_half_width(), 3.5 / 5.5);
  EXPECT_FALSE(estimate_quantile({1, 2, 3}).bounded());
  EXPECT_TRUE(std::isinf(estimate_quantile({1, 2, 3}).relative_half_width()));
}

TEST(StepStatistics, QuietStepsStopAtTheMinimumNoisyOnesNeedMore) {
  const StoppingRule rule{0.02, 6, 1000};
  const auto [quiet_n, quiet_why] = stop_point(jittered(1000, 0.001), rule);  // +-0.1%
  EXPECT_EQ(quiet_why, StopRule::converged);
  EXPECT_EQ(quiet_n, 6u);
  const auto [noisy_n, noisy_why] = stop_point(jittered(1000, 0.05), rule);  // +-5%
  EXPECT_EQ(noisy_why, StopRule::converged);
  // Flat density over +-5%: the interval's half-width is ~0.05 x 1.96 / sqrt(n), within
  // 1% from n ~ 100 on (the same rule in Python stops at 114).
  EXPECT_GT(noisy_n, 90u);
  EXPECT_LT(noisy_n, 140u);
  // Half the delta needs about four times the steps (388 in Python).
  const auto [tight_n, tight_why] = stop_point(jittered(1000, 0.05), StoppingRule{0.01, 6, 1000});
  EXPECT_EQ(tight_why, StopRule::converged);
  EXPECT_GT(tight_n, 3 * noisy_n);
}

TEST(StepStatistics, TheCapStopsANoisySequence) {
  const auto [n, why] = stop_point(jittered(1000, 0.05), StoppingRule{0.02, 6, 40});
  EXPECT_EQ(why, StopRule::max_steps);
  EXPECT_EQ(n, 40u);
  // The minimum holds even for a perfectly quiet sequence.
  const auto [quiet_n, quiet_why] =
      stop_point(std::vector<double>(100, 1.0), StoppingRule{0.02, 25, 100});
  EXPECT_EQ(quiet_why, StopRule::converged);
  EXPECT_EQ(quiet_n, 25u);
}

TEST(StepStatistics, OneOutlierDoesNotMoveTheMedianInterval) {
  std::vector<double> steps = jittered(30, 0.001);
  const QuantileEstimate before = estimate_quantile(steps);
  steps[7] = 50;  // a step stalled by another process
  const QuantileEstimate after = estimate_quantile(steps);
  EXPECT_NEAR(after.estimate, before.estimate, 0.002);
  EXPECT_LE(after.relative_half_width(), 0.01);
}

TEST(StepStatistics, RacingNeedsTheWholeIntervalAboveTheLeadersByHalfDelta) {
  QuantileEstimate leader{10, 1.0, 0.99, 1.02, true};
  EXPECT_TRUE(
      slower_with_confidence({10, 1.1, 1.04, 1.2, true}, leader, 0.02));  // 1.04 > 1.02 x 1.01
  EXPECT_FALSE(
      slower_with_confidence({10, 1.1, 1.025, 1.2, true}, leader, 0.02));  // overlaps the margin
  EXPECT_FALSE(
      slower_with_confidence({10, 1.1, 1.0, 1.2, true}, leader, 0.02));       // overlaps the leader
  EXPECT_FALSE(slower_with_confidence({3, 5.0, 0, 0, false}, leader, 0.02));  // no interval yet
  EXPECT_FALSE(slower_with_confidence({10, 1.1, 1.04, 1.2, true}, QuantileEstimate{}, 0.02));
}

TEST(StepStatistics, SignFlipTestOfEqualMagnitudesIsTheExactSignTest) {
  // Differences of one size: the sign flips' sums are the sign test's counts, so p is the
  // exact binomial sum.
  std::vector<double> nine_of_ten{1, 1, 1, 1, 1, 1, 1, 1, 1, -1};
  SignFlipTest t = sign_flip_test(nine_of_ten);
  EXPECT_EQ(t.n, 10u);
  EXPECT_EQ(t.positive, 9u);
  EXPECT_NEAR(t.mean, 0.8, 1e-15);
  EXPECT_NEAR(t.p_value, 2.0 * 11 / 1024, 1e-15);  // 0.021484375
  EXPECT_NEAR(t.p_greater, 11.0 / 1024, 1e-15);
  t = sign_flip_test({1, 1, 1, 1, 1, 1, 1, 1, -1, -1});
  EXPECT_NEAR(t.p_value, 2.0 * 56 / 1024, 1e-15);  // 0.109375
  t = sign_flip_test({-1, -1, -1, -1, -1});
  EXPECT_NEAR(t.p_value, 0.0625, 1e-15);  // five rounds can never reach 0.05
  EXPECT_NEAR(t.p_greater, 1, 1e-15);
  // Zero differences flip to themselves: they change no sum.
  t = sign_flip_test({0, 0, 1, 1, 1, 1, 1, 1});
  EXPECT_EQ(t.n, 8u);
  EXPECT_NEAR(t.p_value, 2.0 / 64, 1e-15);
  EXPECT_EQ(sign_flip_test({0, 0}).p_value, 1);
}

TEST(StepStatistics, SignFlipTestWeighsHowMuchNotOnlyHowOften) {
  // Faster by 1 in 7 rounds, slower by 10 in 3: the sign test sees a member faster in
  // most rounds; the mean is +2.3. Of the 1024 sign flips, 128 sum to >= 23 and 256 to
  // |sum| >= 23 (enumerated by hand in Python).
  std::vector<double> rounds(7, -1.0);
  rounds.insert(rounds.end(), 3, 10.0);
  const SignFlipTest t = sign_flip_test(rounds);
  EXPECT_NEAR(t.mean, 2.3, 1e-12);
  EXPECT_EQ(t.positive, 3u);
  EXPECT_NEAR(t.p_greater, 128.0 / 1024, 1e-15);
  EXPECT_NEAR(t.p_value, 256.0 / 1024, 1e-15);
}

TEST(StepStatistics, SignFlipTestBeyondTheExactRoundsUsesTheNormalApproximation) {
  // 20 equal differences: z = 20 / sqrt(20), P(Z >= 4.472) = 3.8721e-06 (Python's
  // math.erfc).
  const SignFlipTest t = sign_flip_test(std::vector<double>(20, 0.5));
  EXPECT_GT(t.n, kExactSignFlipRounds);
  EXPECT_NEAR(t.p_greater, 3.872108215522048e-06, 1e-12);
  EXPECT_NEAR(t.p_value, 2 * 3.872108215522048e-06, 1e-12);
}

TEST(StepStatistics, SignFlipIntervalInvertsTheApproximatedTest) {
  // 1..10: mean 5.5, squared deviations 82.5, z = 1.959964: 5.5 +- z sqrt(82.5 / (10 (10 -
  // z^2))) = [3.2315, 7.7685] (by hand in Python).
  std::vector<double> d;
  for (int i = 1; i <= 10; ++i) d.push_back(i);
  const SignFlipTest t = sign_flip_test(d);
  ASSERT_TRUE(t.bounded());
  EXPECT_NEAR(t.low, 3.231513806249559, 1e-6);
  EXPECT_NEAR(t.high, 7.768486193750441, 1e-6);
  // Rounds that all agree: the interval is the point.
  const SignFlipTest same = sign_flip_test(std::vector<double>(8, 0.1));
  ASSERT_TRUE(same.bounded());
  EXPECT_NEAR(same.low, 0.1, 1e-15);
  EXPECT_NEAR(same.high, 0.1, 1e-15);
  // No interval while n <= z^2 (3.84 at 95%).
  EXPECT_FALSE(sign_flip_test({1, 2, 3}).bounded());
}

TEST(StepStatistics, DifferencesForAHalfWidthAtTheSameSpread) {
  // 20 differences of +-0.1: spread s = 0.1, the 95% half-width z s / sqrt(20 - z^2) =
  // 0.048758. To narrow it to +-0.01 takes z^2 + (z s / 0.01)^2 = 387.99 differences; at
  // 97.5% (z = 2.2414) 507.41 (by hand in Python).
  std::vector<double> d;
  for (int i = 0; i < 20; ++i) d.push_back(i % 2 ? 0.1 : -0.1);
  const MeanInterval now = mean_interval(d);
  ASSERT_TRUE(now.bounded());
  EXPECT_NEAR(now.high, 0.048758127236716936, 1e-12);
  EXPECT_NEAR(differences_for_half_width(now, 20, kConfidence, kConfidence, 0.01),
              387.98734089010674, 1e-6);
  EXPECT_NEAR(differences_for_half_width(now, 20, kConfidence, 0.975, 0.01), 507.41250491880453,
              1e-6);
  // Its own half-width: the differences it has.
  EXPECT_NEAR(differences_for_half_width(now, 20, kConfidence, kConfidence, now.high), 20, 1e-9);
  // Nothing to say without an interval or a positive width.
  EXPECT_EQ(differences_for_half_width(mean_interval({0.1, -0.1, 0.2}), 3, kConfidence, kConfidence,
                                       0.01),
            0);
  EXPECT_EQ(differences_for_half_width(now, 20, kConfidence, kConfidence, 0), 0);
}

TEST(StepStatistics, StopRuleNamesRoundTrip) {
  for (StopRule r : {StopRule::none, StopRule::converged, StopRule::max_steps, StopRule::time_cap,
                     StopRule::raced_out, StopRule::brief, StopRule::interleaved})
    EXPECT_EQ(parse_stop_rule(to_string(r)), r);
  EXPECT_THROW(parse_stop_rule("sometimes"), Error);
  EXPECT_FALSE(fully_measured(StopRule::raced_out));
  EXPECT_FALSE(fully_measured(StopRule::brief));
  EXPECT_TRUE(fully_measured(StopRule::time_cap));
}

// The separation test's chance: 1 / C(2n, n) at the first look (5 rounds: 1/252),
// times the looks that could have found it since (6 rounds: 2 / 924); under 5 rounds it
// never finds a separation. The factor is a margin the split must clear.
TEST(SeparationTest, ChanceAndFactor) {
  const std::vector<double> fast{1.0, 1.1, 0.9, 1.05, 1.0}, slow{1.3, 1.4, 1.25, 1.5, 1.3};
  SeparationTest t = separation_test(slow, fast, 1.01);
  EXPECT_TRUE(t.separated);
  EXPECT_EQ(t.n, 5u);
  EXPECT_NEAR(t.p_value, 1.0 / 252, 1e-12);
  EXPECT_FALSE(separation_test(slow, fast, 1.2).separated) << "1.25 is not above 1.1 x 1.2";
  EXPECT_FALSE(separation_test(fast, slow, 1.0).separated);
  std::vector<double> fast6 = fast, slow6 = slow;
  fast6.push_back(1.0);
  slow6.push_back(1.35);
  t = separation_test(slow6, fast6, 1.01);
  EXPECT_TRUE(t.separated);
  EXPECT_NEAR(t.p_value, 2.0 / 924, 1e-12);
  const std::vector<double> four(fast.begin(), fast.begin() + 4),
      four_slow(slow.begin(), slow.begin() + 4);
  t = separation_test(four_slow, four, 1.0);
  EXPECT_FALSE(t.separated) << "4 rounds: before the first look";
  EXPECT_EQ(t.p_value, 1);
}

// Under the null hypothesis (two members with the same step-time distribution), 5
// rounds come out separated about 1 time in 252 when the rounds are exchangeable, and
// no more often when each round shares a drift both members see (the machine's load
// moving between rounds): the chance the test states holds. 200,000 simulated races
// each: the share's standard error is 1.4e-4 at 1/252.
TEST(SeparationTest, NullChanceHoldsWithAndWithoutSharedDrift) {
  std::mt19937_64 rng(20261206);
  std::lognormal_distribution<double> noise(0.0, 0.05);
  std::normal_distribution<double> step(0.0, 0.05);
  const int races = 200000;
  int separated_flat = 0, separated_drift = 0;
  std::vector<double> a(5), b(5);
  for (int race = 0; race < races; ++race) {
    double drift = 0;
    for (size_t r = 0; r < 5; ++r) {
      a[r] = noise(rng);
      b[r] = noise(rng);
    }
    separated_flat += separation_test(a, b, 1.0).separated;
    for (size_t r = 0; r < 5; ++r) {
      drift += step(rng);
      const double shared = std::exp(drift);
      a[r] = shared * noise(rng);
      b[r] = shared * noise(rng);
    }
    separated_drift += separation_test(a, b, 1.0).separated;
  }
  const double flat = static_cast<double>(separated_flat) / races;
  const double with_drift = static_cast<double>(separated_drift) / races;
  EXPECT_NEAR(flat, 1.0 / 252, 6e-4);
  EXPECT_LT(with_drift, 1.0 / 252 + 6e-4);
}

TEST(StepStatistics, TrimmedTestCutsBothTailsAndWidensByTheShareKept) {
  // 10 differences at trim 0.1: g = 1 cut from each end (-0.30 and 0.50). The trimmed mean
  // is 0.12 / 8 = 0.015; the winsorized values (-0.30 -> 0, 0.50 -> 0.03) have squared
  // deviations 1.05e-3 about their mean, so the interval is 0.015 +- z sqrt(1.05e-3 /
  // (10 (10 - z^2))) / 0.8; the test's z = 0.015 x 8 / sqrt(33e-4), by the normal
  // approximation (computed in Python).
  const std::vector<double> d = {-0.30, 0.00, 0.01, 0.01, 0.01, 0.02, 0.02, 0.02, 0.03, 0.50};
  const SignFlipTest trimmed = sign_flip_test(d, kConfidence, 0.1);
  EXPECT_NEAR(trimmed.mean, 0.015, 1e-15);
  EXPECT_NEAR(trimmed.low, 0.004883883347225516, 1e-12);
  EXPECT_NEAR(trimmed.high, 0.025116116652774488, 1e-12);
  EXPECT_NEAR(trimmed.p_value, 0.03671385636270413, 1e-12);
  EXPECT_NEAR(trimmed.p_greater, 0.018356928181352063, 1e-12);
  EXPECT_EQ(trimmed.positive, 8u);
  // The plain mean of the same rounds is pulled to 0.032 by the two wild ones, and its
  // interval reaches below zero: not significant.
  const SignFlipTest plain = sign_flip_test(d);
  EXPECT_NEAR(plain.mean, 0.032, 1e-15);
  EXPECT_LT(plain.low, 0);
  EXPECT_GT(plain.p_value, 0.05);
  // Too few to cut one (floor(0.1 x 9) = 0): the plain mean and its exact test.
  const std::vector<double> nine(d.begin(), d.begin() + 9);
  const SignFlipTest short_series = sign_flip_test(nine, kConfidence, 0.1);
  const SignFlipTest short_plain = sign_flip_test(nine);
  EXPECT_DOUBLE_EQ(short_series.mean, short_plain.mean);
  EXPECT_DOUBLE_EQ(short_series.p_value, short_plain.p_value);
  EXPECT_DOUBLE_EQ(short_series.low, short_plain.low);
}

TEST(StepStatistics, TrimmedMeanDropsBothTails) {
  EXPECT_DOUBLE_EQ(trimmed_mean({1, 2, 3, 4, 100}, 0.2), 3);
  EXPECT_DOUBLE_EQ(trimmed_mean({5}, 0.2), 5);
}

// The find's rule: the last run within +-delta/2 of the fastest before it.
TEST(FastestConfirmed, TheLastRunMustLandWithinHalfDeltaOfTheFastestBefore) {
  EXPECT_FALSE(fastest_confirmed({}, 0.02));
  EXPECT_FALSE(fastest_confirmed({1.0}, 0.02));
  EXPECT_TRUE(fastest_confirmed({1.0, 1.009}, 0.02));   // 0.9 % above
  EXPECT_TRUE(fastest_confirmed({1.0, 0.991}, 0.02));   // 0.9 % below
  EXPECT_FALSE(fastest_confirmed({1.0, 1.011}, 0.02));  // 1.1 % above
  EXPECT_FALSE(fastest_confirmed({1.0, 0.98}, 0.02));   // moved the fastest by 2 %
  // Against the fastest before it, not the previous run.
  EXPECT_TRUE(fastest_confirmed({1.2, 1.0, 1.5, 1.005}, 0.02));
  EXPECT_FALSE(fastest_confirmed({1.0, 1.005, 1.2}, 0.02));
  EXPECT_TRUE(fastest_confirmed({2.0, 2.3}, 0.5));
}

}  // namespace
}  // namespace tunescope::tuner
