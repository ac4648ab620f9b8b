// When the interleaved rounds stop settling a member (TurnSettling.h), on fixed step
// times: the ratio of a turn's first step to its timed step, its median's 95%
// order-statistic interval (with 6 pairs: the smallest and largest ratio), and the rule
// that needs that interval's upper end within 1 + delta/2.
#include "core/tuner/TurnSettling.h"

#include <gtest/gtest.h>

namespace tunescope::tuner {
namespace {

// Timed steps of 100 ms and first steps `excess` above them, round by round.
std::vector<double> scaled(const std::vector<double>& next, const std::vector<double>& excess) {
  std::vector<double> out;
  for (size_t r = 0; r < next.size(); ++r) out.push_back(next[r] * (1 + excess[r]));
  return out;
}

const std::vector<double> kNext{0.100, 0.104, 0.098, 0.101, 0.099, 0.102};

TEST(TurnSettling, ARatioNeedsSixPairsForAnInterval) {
  const std::vector<double> five(kNext.begin(), kNext.begin() + 5);
  EXPECT_FALSE(cold_start_ratio(five, five).bounded());
  EXPECT_FALSE(cold_start_negligible(five, five, 0.02)) << "no interval, no decision";
  const QuantileEstimate six = cold_start_ratio(kNext, kNext);
  ASSERT_TRUE(six.bounded());
  EXPECT_DOUBLE_EQ(six.estimate, 1.0);
}

// A long step whose first step of a turn costs 0.1-0.6 % more: within delta/2 = 1 %.
TEST(TurnSettling, AColdStartBelowHalfDeltaIsNegligible) {
  const std::vector<double> first = scaled(kNext, {0.001, 0.004, 0.002, 0.006, 0.003, 0.005});
  const QuantileEstimate ratio = cold_start_ratio(first, kNext);
  EXPECT_NEAR(ratio.high, 1.006, 1e-9) << "6 pairs: the interval is [min, max]";
  EXPECT_TRUE(cold_start_negligible(first, kNext, 0.02));
  EXPECT_FALSE(cold_start_negligible(first, kNext, 0.01)) << "above 1 + 0.005";
}

// lenet5's short steps: a first step 2-5 % above the next (docs/TUNER-MEASUREMENT.md)
// keeps settling, and so does one large ratio among small ones while only six pairs
// bound the median (the interval's upper end is the largest of them).
TEST(TurnSettling, AColdStartAboveHalfDeltaKeepsSettling) {
  EXPECT_FALSE(
      cold_start_negligible(scaled(kNext, {0.02, 0.05, 0.03, 0.04, 0.025, 0.035}), kNext, 0.02));
  EXPECT_FALSE(
      cold_start_negligible(scaled(kNext, {0.001, 0.002, 0.25, 0.003, 0.002, 0.001}), kNext, 0.02));
}

// More rounds narrow the interval: with 20 pairs it is [x(6), x(15)] (1-based), so two
// outliers above 1 % no longer block a median excess of about 0.3 %.
TEST(TurnSettling, MoreRoundsLetOutliersPass) {
  std::vector<double> next, excess;
  for (int r = 0; r < 20; ++r) {
    next.push_back(0.1);
    excess.push_back(r == 3 || r == 11 ? 0.2 : 0.001 * (r % 6));
  }
  const std::vector<double> first = scaled(next, excess);
  EXPECT_TRUE(cold_start_negligible(first, next, 0.02));
  std::vector<double> six_first(first.begin(), first.begin() + 6);
  std::vector<double> six_next(next.begin(), next.begin() + 6);
  EXPECT_FALSE(cold_start_negligible(six_first, six_next, 0.02)) << "an outlier among six";
}

// Pairs are by index: a longer series' extra entries (rounds after settling stopped)
// are not paired.
TEST(TurnSettling, ExtraRoundsAreNotPaired) {
  std::vector<double> next = kNext;
  next.push_back(0.05);  // a round timed without settling: no first step to pair with
  EXPECT_EQ(cold_start_ratio(kNext, next).n, 6u);
}

TEST(TurnSettling, FarBehindMeansEveryRoundAboveTheFastestsSlowestByTheFactor) {
  // Member 0 the fastest (median 10 ms, slowest round 11 ms); member 1 always above
  // 1.25 x 11 = 13.75 ms; member 2 above in two rounds of three; member 3 not racing.
  const std::vector<std::vector<double>> rounds = {
      {0.010, 0.011, 0.009}, {0.014, 0.020, 0.016}, {0.014, 0.012, 0.030}, {0.050, 0.050, 0.050}};
  const std::vector<bool> behind = far_behind(rounds, {0, 1, 2});
  ASSERT_EQ(behind.size(), 4u);
  EXPECT_FALSE(behind[0]);  // the fastest
  EXPECT_TRUE(behind[1]);
  EXPECT_FALSE(behind[2]);  // one round within the factor: it settles again
  EXPECT_FALSE(behind[3]);  // not racing
  // Just above 1.25 x the fastest's slowest is far behind; at it, not.
  EXPECT_TRUE(far_behind({{0.010}, {0.010 * kFarBehindFactor * 1.001}}, {0, 1})[1]);
  EXPECT_FALSE(far_behind({{0.010}, {0.010 * kFarBehindFactor}}, {0, 1})[1]);
  // Alone, or before the first round, no one is.
  EXPECT_FALSE(far_behind({{0.010}, {0.050}}, {1})[1]);
  EXPECT_FALSE(far_behind({{}, {}}, {0, 1})[1]);
}

}  // namespace
}  // namespace tunescope::tuner
