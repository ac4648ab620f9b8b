// The ranking rule (tiers, then ex/s), the choice of the leaders to settle, and the
// verdict of interleaved rounds: the test of the (trimmed) mean paired log ratio, and the
// tie rule that hands a difference to the simpler config only when it is both
// insignificant and below delta. The p-values and intervals were computed by hand in
// Python (every sign flip enumerated up to 16 rounds; math.erfc beyond).
#include "ZoneTestRounds.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/Ranking.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tunescope::tuner {
namespace {

RunConfig config(Layout layout, const std::string& algorithm, int threads = 1) {
  RunConfig c;
  c.batch = 8;
  knobs::layout.set(c.knobs, layout);
  c.conv.default_algorithm = algorithm;
  knobs::threads.set(c.knobs, threads);
  return c;
}

TrialResult ok(RunConfig c, double eps, StopRule stop, double half_width = 0.01) {
  TrialResult t;
  t.config = std::move(c);
  t.status = TrialStatus::ok;
  t.figures.steps = 20;
  t.figures.median_eps = eps;
  t.figures.eps_low = eps * (1 - half_width);
  t.figures.eps_high = eps * (1 + half_width);
  t.figures.stop = stop;
  return t;
}

// Functions, not namespace-scope objects: a knob is itself a namespace-scope object of
// another file, which may not be constructed yet while this file's statics are.
// The tests that pin the plain mean's figures (computed by hand) ask for no trim.
constexpr double kPlainMean = 0;

RunConfig simple_config() { return config(Layout::NCHW, "gemm"); }  // simpler than complex_config()
RunConfig complex_config() { return config(Layout::NHWC, "gemm"); }

// Round times: `base` for the simple config, `base x ratio[r]` for the complex one.
std::vector<std::vector<double>> rounds_of(const std::vector<double>& ratios) {
  std::vector<std::vector<double>> rounds(2);
  for (double r : ratios) {
    rounds[0].push_back(0.010);
    rounds[1].push_back(0.010 * r);
  }
  return rounds;
}

TEST(RoundsVerdict, SignificantDifferenceGoesToTheFasterEvenBelowDelta) {
  // The complex config 0.5% faster in all 20 rounds. 20 rounds trim 2 from each end
  // (kRoundsTrim 0.1): z = trimmed mean x 16 / sqrt(sum of squares) = 16 / sqrt(20),
  // p = 3.47e-04.
  const RoundsVerdict v = rounds_verdict({simple_config(), complex_config()},
                                         rounds_of(std::vector<double>(20, 0.995)), 0.02);
  EXPECT_EQ(v.fastest, 1u);
  EXPECT_EQ(v.winner, 1u);
  ASSERT_EQ(v.comparisons.size(), 1u);
  EXPECT_NEAR(v.comparisons[0].test.p_value, 3.466193511346677e-04, 1e-12);
  EXPECT_TRUE(v.comparisons[0].significant);
  EXPECT_TRUE(v.comparisons[0].below_delta);
  EXPECT_FALSE(v.comparisons[0].tie());
  EXPECT_TRUE(v.settled);
  EXPECT_NEAR(v.comparisons[0].ratio, 1 / 0.995, 1e-12);
  EXPECT_NE(v.decision.find("test of the 10%-trimmed mean paired log step-time ratio"),
            std::string::npos)
      << v.decision;
  EXPECT_NE(v.decision.find("p = 0.000347 < 0.05"), std::string::npos) << v.decision;
  EXPECT_NE(v.decision.find("the fastest wins"), std::string::npos) << v.decision;
}

TEST(RoundsVerdict, AnOpenComparisonSaysWhatWouldDecideIt) {
  // The complex config 12% slower and 8% faster by turns over 10 rounds: mean log ratio
  // 0.018184 (1.8% slower), 95% CI [0.945, 1.098]: not significant; the zone's one-sided
  // bound at 0.05 is 0.961 < 1 - delta: open. At its spread (s = 0.095145) the interval
  // would clear 1 after z^2 + (z s / 0.018184)^2 = 109.01 rounds, and the zone's bound
  // would rise above 0.98 after 2.7055 + (1.6449 s / 0.038387)^2 = 19.33: 20 rounds.
  std::vector<double> ratios;
  for (int r = 0; r < 10; ++r) ratios.push_back(r % 2 ? 1 / 1.08 : 1.12);
  const RoundsVerdict v = rounds_verdict({simple_config(), complex_config()}, rounds_of(ratios),
                                         0.02, kAlpha, kPlainMean);
  EXPECT_FALSE(v.settled);
  EXPECT_EQ(v.fastest, 0u);
  ASSERT_EQ(v.comparisons.size(), 1u);
  EXPECT_NEAR(v.comparisons[0].zone_low, 0.9610189031385316, 1e-9);
  EXPECT_EQ(v.comparisons[0].rounds_to_decide, 20u);
  EXPECT_EQ(v.rounds_to_decide, 20u);
  EXPECT_NE(v.decision.find("open (about 20 rounds would decide it)"), std::string::npos)
      << v.decision;
  EXPECT_NE(v.decision.find(": undecided (a comparison is open), the fastest so far wins"),
            std::string::npos)
      << v.decision;
  EXPECT_EQ(v.decision.find("the fastest wins"), std::string::npos) << v.decision;

  // The ending the tune adds: 10 more rounds of both members (10 ms and a mean of 10.23
  // ms), a settle and a timed step a turn: 0.405 s.
  const std::string ending = undecided_ending(v, 10, rounds_of(ratios), 2, "at a cap (test)");
  EXPECT_EQ(ending,
            "; the rounds stopped after 10 rounds at a cap (test): deciding every open "
            "comparison would take about 20 rounds in all at this spread, some 0.405 s more of "
            "steps");
  // Where the verdict cannot say (no interval yet), the cause alone.
  const RoundsVerdict early =
      rounds_verdict({simple_config(), complex_config()},
                     rounds_of({1.12, 1 / 1.08, 1.12, 1 / 1.08}), 0.02, kAlpha, kPlainMean);
  EXPECT_FALSE(early.settled);
  EXPECT_EQ(early.rounds_to_decide, 0u);
  // Its point estimate within delta reads as a tie, still open.
  EXPECT_NE(early.decision.find("below delta 2%: a tie, open: undecided"), std::string::npos)
      << early.decision;
  EXPECT_EQ(undecided_ending(early, 4, rounds_of({1.12, 1 / 1.08, 1.12, 1 / 1.08}), 2, "at a cap"),
            "; the rounds stopped after 4 rounds at a cap");
  // A settled verdict has nothing open.
  const RoundsVerdict settled = rounds_verdict({simple_config(), complex_config()},
                                               rounds_of(std::vector<double>(20, 0.995)), 0.02);
  EXPECT_TRUE(settled.settled);
  EXPECT_EQ(settled.rounds_to_decide, 0u);
  EXPECT_EQ(settled.decision.find("undecided"), std::string::npos) << settled.decision;
}

TEST(RoundsVerdict, TheTrimmedMeanSettlesTwinsThatAFewWildRoundsKeepOpen) {
  // Two configs alike (1% apart either way by turns) over 30 rounds, but in 3 rounds the
  // complex one's turn was 1.5x slow and in 2 the simple one's was (a turn of the rounds
  // is slow far more often than a training step). By the plain mean the wild rounds widen
  // the interval of the ratio to below 1 - delta: undecided. The 10% trim (3 from each
  // end) cuts them, and the interval shows that neither is delta faster: settled, a tie
  // that the simpler config wins.
  std::vector<double> ratios;
  for (int r = 0; r < 25; ++r) ratios.push_back(r % 2 ? 1.01 : 1 / 1.01);
  for (int r = 0; r < 3; ++r) ratios.push_back(1.5);
  for (int r = 0; r < 2; ++r) ratios.push_back(1 / 1.5);
  const RoundsVerdict plain = rounds_verdict({simple_config(), complex_config()}, rounds_of(ratios),
                                             0.02, kAlpha, kPlainMean);
  EXPECT_FALSE(plain.settled);
  const RoundsVerdict trimmed =
      rounds_verdict({simple_config(), complex_config()}, rounds_of(ratios), 0.02);
  ASSERT_EQ(trimmed.comparisons.size(), 1u);
  EXPECT_TRUE(trimmed.settled) << trimmed.decision;
  EXPECT_TRUE(trimmed.comparisons[0].tie()) << trimmed.decision;
  EXPECT_GT(trimmed.comparisons[0].ratio_low, 0.98);
  EXPECT_LT(trimmed.comparisons[0].ratio_high, 1.02);
  EXPECT_EQ(trimmed.winner, 0u);
  EXPECT_NE(trimmed.decision.find("test of the 10%-trimmed mean"), std::string::npos)
      << trimmed.decision;
}

TEST(RoundsVerdict, NoTrimWhereOtherProcessesLoadTheMachine) {
  // Beside another process a two-thread member is 10% faster in 24 rounds of 30 and 2x
  // slower in 6 (a busy loop takes one of its CPUs): a training run pays its mean, 12%
  // more per step. The 10% trim cuts 3 of the 6 slow rounds and reads it 0.55% faster;
  // the plain mean of the log ratios reads it 5.6% slower. So the rounds trim only on a
  // quiet machine (rounds_trim: free_cores 0), where slow turns are the interleaving's.
  std::vector<double> ratios(24, 0.9);
  ratios.insert(ratios.end(), 6, 2.0);
  const std::vector<RunConfig> configs = {config(Layout::NHWC, "gemm", 1),
                                          config(Layout::NHWC, "gemm", 2)};
  EXPECT_DOUBLE_EQ(rounds_trim(0), kRoundsTrim);
  EXPECT_DOUBLE_EQ(rounds_trim(1.0), 0);
  const RoundsVerdict quiet =
      rounds_verdict(configs, rounds_of(ratios), 0.02, kAlpha, rounds_trim(0));
  EXPECT_EQ(quiet.fastest, 1u);
  const RoundsVerdict loaded =
      rounds_verdict(configs, rounds_of(ratios), 0.02, kAlpha, rounds_trim(1.0));
  EXPECT_EQ(loaded.fastest, 0u);
  EXPECT_EQ(loaded.winner, 0u);
  EXPECT_NEAR(loaded.comparisons[0].ratio, std::exp((24 * std::log(0.9) + 6 * std::log(2.0)) / 30),
              1e-12);
}

TEST(RoundsVerdict, TheMeanNotTheMedianOfThePairedRoundsDecides) {
  // The machine's state shifts between rounds: the simple config takes 1 ms in 10 rounds
  // and 10 ms in 10; the complex one is 10 % faster in those 10 slow rounds and in 5 of
  // the fast ones, and 9x slower in the other 5 fast ones. Faster in 15 of 20 rounds (the
  // sign test: p = 0.041, and it won), but a training run pays its mean: exp(mean log
  // ratio) = 1.60x slower. The simple config is the fastest; the complex one's p =
  // 0.0564 (z = 1.91), so no "X is faster, p < alpha" reads against the winner.
  std::vector<std::vector<double>> rounds(2);
  for (int r = 0; r < 20; ++r) {
    const bool slow_round = r >= 10;
    rounds[0].push_back(slow_round ? 0.010 : 0.001);
    rounds[1].push_back(slow_round ? 0.009 : (r < 5 ? 0.0009 : 0.009));
  }
  const RoundsVerdict v =
      rounds_verdict({simple_config(), complex_config()}, rounds, 0.02, kAlpha, kPlainMean);
  EXPECT_EQ(v.fastest, 0u);
  EXPECT_EQ(v.winner, 0u);
  ASSERT_EQ(v.comparisons.size(), 1u);
  EXPECT_EQ(v.comparisons[0].other, 1u);
  EXPECT_NEAR(v.comparisons[0].ratio, 1 / 0.6248236946559437, 1e-9);
  EXPECT_NEAR(v.comparisons[0].test.p_value, 0.056413224864222365, 1e-9);
  EXPECT_FALSE(v.comparisons[0].significant);
  EXPECT_NE(v.decision.find("the fastest wins"), std::string::npos) << v.decision;
  EXPECT_EQ(v.decision.find(" faster"), std::string::npos) << v.decision;
}

TEST(RoundsVerdict, ATwoThreadMemberFastInMostRoundsButSlowerOnAverageLoses) {
  // What a one-core busy loop does to a two-thread config: 10 % faster than the
  // one-thread config in 6 rounds of 10, 30 % slower in the other 4. Its paired median is
  // 0.9 (the sign-test rule picked it); exp(mean log ratio) is 1/0.959: 4.3 % slower.
  const std::vector<double> pattern = {0.9, 1.3, 0.9, 0.9, 1.3, 0.9, 1.3, 0.9, 0.9, 1.3};
  std::vector<std::vector<double>> rounds(2);
  for (int r = 0; r < 30; ++r) {
    rounds[0].push_back(0.010);
    rounds[1].push_back(0.010 * pattern[static_cast<size_t>(r) % pattern.size()]);
  }
  const RoundsVerdict busy =
      rounds_verdict({config(Layout::NHWC, "gemm", 1), config(Layout::NHWC, "gemm", 2)}, rounds,
                     0.02, kAlpha, kPlainMean);
  EXPECT_EQ(busy.fastest, 0u);
  EXPECT_EQ(busy.winner, 0u);
  EXPECT_NEAR(busy.comparisons[0].ratio, 1 / 0.9591292893048374, 1e-9);
  // A real two-thread winner still wins: 5 % faster in 8 of 12 rounds, 3 % in the rest.
  std::vector<std::vector<double>> quiet(2);
  for (int r = 0; r < 12; ++r) {
    quiet[0].push_back(0.010);
    quiet[1].push_back(r % 3 ? 0.0095 : 0.0097);
  }
  const RoundsVerdict fast =
      rounds_verdict({config(Layout::NHWC, "gemm", 1), config(Layout::NHWC, "gemm", 2)}, quiet,
                     0.02, kAlpha, kPlainMean);
  EXPECT_EQ(fast.winner, 1u);
  EXPECT_TRUE(fast.comparisons[0].significant);
  EXPECT_NEAR(fast.comparisons[0].test.p_value, 2.0 / 4096, 1e-15);
}

TEST(RoundsVerdict, InsignificantAndBelowDeltaGoesToTheSimplerConfig) {
  // The complex config 1% faster in 11 rounds, 0.8% slower in 9: its mean is lower (by
  // 0.19 %), but p = 0.344 and the interval [0.9976, 1.0063] lies within +-delta 2%.
  std::vector<double> ratios(11, 0.99);
  ratios.insert(ratios.end(), 9, 1.008);
  const RoundsVerdict v = rounds_verdict({simple_config(), complex_config()}, rounds_of(ratios),
                                         0.02, kAlpha, kPlainMean);
  EXPECT_EQ(v.fastest, 1u);
  EXPECT_EQ(v.winner, 0u);
  ASSERT_EQ(v.comparisons.size(), 1u);
  EXPECT_NEAR(v.comparisons[0].test.p_value, 0.34369427414115505, 1e-9);
  EXPECT_TRUE(v.comparisons[0].tie());
  EXPECT_NE(v.decision.find("tie rule"), std::string::npos) << v.decision;
  EXPECT_NE(v.decision.find("p = 0.344 >= 0.05"), std::string::npos) << v.decision;
  // The same rounds with delta 0.5%: the 1% difference is not below delta, so the faster wins.
  const RoundsVerdict strict = rounds_verdict({simple_config(), complex_config()},
                                              rounds_of(ratios), 0.005, kAlpha, kPlainMean);
  EXPECT_EQ(strict.winner, 1u);
  EXPECT_FALSE(strict.comparisons[0].tie());
}

TEST(RoundsVerdict, InsignificantButAboveDeltaGoesToTheFaster) {
  // 5 rounds, 5% faster in each: p = 2 / 32 = 0.0625, not significant, but 5% >= delta.
  const RoundsVerdict v = rounds_verdict({simple_config(), complex_config()},
                                         rounds_of(std::vector<double>(5, 0.95)), 0.02);
  EXPECT_NEAR(v.comparisons[0].test.p_value, 0.0625, 1e-15);
  EXPECT_FALSE(v.comparisons[0].significant);
  EXPECT_FALSE(v.comparisons[0].below_delta);
  EXPECT_EQ(v.winner, 1u);
  // Not significant, but settled by the zone: the simpler member is slower in all 5
  // rounds, so its one-sided bound at alpha (2^-5 <= 0.05) shows it is not delta faster.
  EXPECT_TRUE(v.settled);
  // With 4 rounds no bound exists yet (2^-4 > 0.05): more rounds could change the verdict.
  EXPECT_FALSE(rounds_verdict({simple_config(), complex_config()},
                              rounds_of(std::vector<double>(4, 0.95)), 0.02)
                   .settled);
}

TEST(RoundsVerdict, TheSimplerFastestNeedsNoTieRule) {
  const RoundsVerdict v = rounds_verdict({simple_config(), complex_config()},
                                         rounds_of(std::vector<double>(8, 1.3)), 0.02);
  EXPECT_EQ(v.fastest, 0u);
  EXPECT_EQ(v.winner, 0u);
  EXPECT_NEAR(v.comparisons[0].test.p_value, 2.0 / 256, 1e-15);
}

TEST(RoundsVerdict, SettlesOnceTheDifferenceIsKnownToBeWithinDelta) {
  // +0.2% and -0.1% by turns: never significant, but the interval of the ratio lies
  // within +-2%, so more rounds could only turn the tie into a significant sub-delta
  // difference.
  std::vector<double> ratios;
  for (int r = 0; r < 12; ++r) ratios.push_back(r % 2 ? 1.002 : 0.999);
  const RoundsVerdict v =
      rounds_verdict({simple_config(), complex_config()}, rounds_of(ratios), 0.02);
  EXPECT_TRUE(v.settled);
  EXPECT_TRUE(v.comparisons[0].tie());
  EXPECT_EQ(v.winner, 0u);
}

TEST(RoundsVerdict, SettlesOnceNoMemberCanBeDeltaFasterAndTiesOnlyWithinDelta) {
  // The simpler config 3% slower and 1.5% faster by turns: p = 0.369, ratio 1.0072, its
  // 95% interval [0.9919, 1.0228]. It cannot be more than 2% faster than the fastest
  // (the interval's low end is above 0.98), so picking the fastest costs at most delta:
  // settled. But it may be 2.3% slower, so it is no tie: the fastest wins.
  std::vector<double> ratios;
  for (int r = 0; r < 12; ++r) ratios.push_back(r % 2 ? 1 / 1.03 : 1 / 0.985);
  const RoundsVerdict v = rounds_verdict({simple_config(), complex_config()}, rounds_of(ratios),
                                         0.02, kAlpha, kPlainMean);
  EXPECT_EQ(v.fastest, 1u);
  ASSERT_EQ(v.comparisons.size(), 1u);
  const PairedComparison& c = v.comparisons[0];
  EXPECT_FALSE(c.significant);
  EXPECT_NEAR(c.ratio_low, 0.9919285319887445, 1e-9);
  EXPECT_NEAR(c.ratio_high, 1.0228055422157292, 1e-9);
  EXPECT_LT(std::abs(c.ratio - 1), 0.02);  // the point estimate alone would have tied
  EXPECT_FALSE(c.below_delta);
  EXPECT_FALSE(c.tie());
  EXPECT_TRUE(c.settled);
  EXPECT_TRUE(v.settled);
  EXPECT_EQ(v.winner, 1u) << v.decision;
  // 12% slower and 5% faster by turns: the 95% interval [0.9749, 1.0914] reaches below
  // 1 - delta, but the zone's claim reads only the low end, and the one-sided bound at
  // alpha is 0.9867: settled. 15% slower and 7% faster: that bound is 0.9766, so the
  // other might be more than delta faster: undecided.
  const auto alternating = [](double slower, double faster) {
    std::vector<double> ratios;
    for (int r = 0; r < 12; ++r) ratios.push_back(r % 2 ? 1 / slower : 1 / faster);
    return rounds_of(ratios);
  };
  EXPECT_TRUE(rounds_verdict({simple_config(), complex_config()}, alternating(1.12, 0.95), 0.02,
                             kAlpha, kPlainMean)
                  .settled);
  EXPECT_FALSE(rounds_verdict({simple_config(), complex_config()}, alternating(1.15, 0.93), 0.02,
                              kAlpha, kPlainMean)
                   .settled);
}

TEST(RoundsVerdict, TheIndifferenceZoneHoldsAgainstEveryMemberAtOnce) {
  // Ratios to the fastest, 5 of 12 below 1: p = 0.309, insignificant. The zone reads the
  // one-sided lower bound: alone against the fastest (at alpha), its low end is 0.9861, so
  // the other cannot be 2% faster, although the two-sided 95% interval reaches down to
  // 0.9771. Against three members at once each bound is at alpha / 3, whose low end is
  // 0.9714: undecided.
  const std::vector<double> close = test_support::close_member_ratios();
  const std::vector<std::vector<double>> two = test_support::rounds_against_fastest({close});
  const std::vector<std::vector<double>> four =
      test_support::rounds_against_fastest({close, close, close});
  const RoundsVerdict pair =
      rounds_verdict({simple_config(), complex_config()}, two, 0.02, kAlpha, kPlainMean);
  EXPECT_EQ(pair.fastest, 0u);
  EXPECT_FALSE(pair.comparisons[0].significant);
  EXPECT_NEAR(pair.comparisons[0].test.p_value, 0.30859375, 1e-12);
  EXPECT_NEAR(pair.comparisons[0].ratio_low, 0.9770550040242019, 1e-9);
  EXPECT_NEAR(pair.comparisons[0].zone_low, 0.9861426851060474, 1e-9);
  EXPECT_TRUE(pair.settled);
  EXPECT_NE(
      pair.decision.find("in the indifference zone (one-sided bound 0.986 > 1 - delta at 0.05)"),
      std::string::npos)
      << pair.decision;
  const RoundsVerdict group =
      rounds_verdict({simple_config(), complex_config(), config(Layout::NCHW, "direct", 2),
                      config(Layout::NHWC, "direct", 2)},
                     four, 0.02, kAlpha, kPlainMean);
  EXPECT_EQ(group.fastest, 0u);
  EXPECT_FALSE(group.settled);
  EXPECT_EQ(group.winner, 0u);
}

// Holm's step-down: claims shown against members far behind lower the level of the rest.
// The close member of the test above, beside two members 20% slower in every round: their
// claims are shown at alpha / 3, so the close member's is tested at alpha alone, where its
// bound is 0.9861, as in the pair: settled. Tested at alpha / 3 (Bonferroni), its bound
// would be the 0.9714 that left the group of three close members undecided.
TEST(RoundsVerdict, TheZoneStepsDownOnceTheFarMembersAreShown) {
  const std::vector<double> close = test_support::close_member_ratios();
  const std::vector<double> far(close.size(), 1.2);
  std::vector<std::vector<double>> rounds = test_support::rounds_against_fastest({close, far, far});
  const RoundsVerdict v =
      rounds_verdict({simple_config(), complex_config(), config(Layout::NCHW, "direct", 2),
                      config(Layout::NHWC, "direct", 2)},
                     rounds, 0.02, kAlpha, kPlainMean);
  EXPECT_EQ(v.fastest, 0u);
  ASSERT_EQ(v.comparisons.size(), 3u);
  EXPECT_FALSE(v.comparisons[0].significant);
  EXPECT_NEAR(v.comparisons[0].zone_level, kAlpha, 1e-15);
  EXPECT_NEAR(v.comparisons[0].zone_low, 0.9861426851060474, 1e-9);
  EXPECT_NEAR(v.comparisons[1].zone_level, kAlpha / 3, 1e-15);
  EXPECT_NEAR(v.comparisons[2].zone_level, kAlpha / 3, 1e-15);
  EXPECT_TRUE(v.settled) << v.decision;
  EXPECT_EQ(v.winner, 0u);
  EXPECT_NE(v.decision.find("in the indifference zone (one-sided bound 0.986 > 1 - delta at 0.05)"),
            std::string::npos)
      << v.decision;
  // With a second close member in place of a far one, the far one's claim is shown at
  // alpha / 3, and the close ones' are tested at alpha / 2, where their bound still
  // reaches below 1 - delta: undecided.
  rounds[3] = rounds[1];
  const RoundsVerdict open =
      rounds_verdict({simple_config(), complex_config(), config(Layout::NCHW, "direct", 2),
                      config(Layout::NHWC, "direct", 2)},
                     rounds, 0.02, kAlpha, kPlainMean);
  EXPECT_FALSE(open.settled);
  EXPECT_NEAR(open.comparisons[0].zone_level, kAlpha / 2, 1e-15);
  EXPECT_NEAR(open.comparisons[2].zone_level, kAlpha / 2, 1e-15);
  EXPECT_LT(open.comparisons[0].zone_low, 0.98);
  EXPECT_FALSE(open.comparisons[0].settled);
  EXPECT_TRUE(open.comparisons[1].settled);
}

TEST(RoundsVerdict, AmongFourTheSimplestTiedWithTheFastestWins) {
  const RunConfig fastest = config(Layout::NHWC, "gemm", 2);
  const RunConfig tied_simple = config(Layout::NCHW, "gemm", 1);
  const RunConfig tied_nhwc = config(Layout::NHWC, "gemm", 1);
  const RunConfig slow = config(Layout::NCHW, "direct", 1);
  std::vector<std::vector<double>> rounds(4);
  for (int r = 0; r < 16; ++r) {
    rounds[0].push_back(0.010);
    // 1.5% slower and 1% faster by turns: p = 1, the ratio's interval [0.99, 1.015]
    // within +-2%: ties.
    rounds[1].push_back(r % 2 ? 0.01015 : 0.0099);
    rounds[2].push_back(r % 2 ? 0.01015 : 0.0099);
    rounds[3].push_back(0.012);  // 20% slower in every round
  }
  const RoundsVerdict v =
      rounds_verdict({fastest, tied_simple, tied_nhwc, slow}, rounds, 0.02, kAlpha, kPlainMean);
  EXPECT_EQ(v.fastest, 0u);
  EXPECT_EQ(v.winner, 1u);
  ASSERT_EQ(v.comparisons.size(), 3u);
  EXPECT_TRUE(v.comparisons[2].significant);  // the slow one
  EXPECT_NEAR(v.comparisons[2].test.p_value, 2.0 / 65536, 1e-15);
}

TEST(OpenOnlyWhereRacedAgain, TheFirstStageStopsWhenOnlyTheFastestsGroupIsOpen) {
  // 0 nhwc two threads, the fastest; 1 its bound twin, 8 % slower and 5 % faster by turns
  // (open: its interval reaches below 1 - delta); 2 nchw two threads, 20 % slower in
  // every round (settled: significant); 3 nchw one thread, open like the twin.
  RunConfig bound = config(Layout::NHWC, "gemm", 2);
  knobs::cpu_binding.set(bound.knobs, CpuBinding::cores);
  const std::vector<RunConfig> configs{config(Layout::NHWC, "gemm", 2), bound,
                                       config(Layout::NCHW, "gemm", 2),
                                       config(Layout::NCHW, "gemm", 1)};
  std::vector<std::vector<double>> rounds(4);
  for (int r = 0; r < 12; ++r) {
    const double base = 0.01 * (1 + 0.05 * (r % 3));
    rounds[0].push_back(base);
    rounds[1].push_back(base * (r % 2 ? 1.08 : 0.95));
    rounds[2].push_back(base * 1.2);
    rounds[3].push_back(base * (r % 2 ? 1.08 : 0.95));
  }
  const std::vector<RunConfig> nhwc_next{config(Layout::NHWC, "direct", 2)};
  const std::vector<RunConfig> nchw_next{config(Layout::NCHW, "direct", 2)};
  // Without member 3: only the twin is open, and the next stage races nhwc two threads.
  const std::vector<RunConfig> three(configs.begin(), configs.begin() + 3);
  const std::vector<std::vector<double>> three_rounds(rounds.begin(), rounds.begin() + 3);
  const RoundsVerdict v = rounds_verdict(three, three_rounds, 0.02, kAlpha, kPlainMean);
  ASSERT_EQ(v.fastest, 0u) << v.decision;
  ASSERT_FALSE(v.settled) << v.decision;
  EXPECT_TRUE(open_only_where_raced_again(three, v, nhwc_next));
  // The next stage does not race that (layout, threads) again, or has nothing: go on.
  EXPECT_FALSE(open_only_where_raced_again(three, v, nchw_next));
  EXPECT_FALSE(open_only_where_raced_again(three, v, {}));
  // A member of another (layout, threads) open too: its group is not decided yet.
  const RoundsVerdict all = rounds_verdict(configs, rounds, 0.02, kAlpha, kPlainMean);
  ASSERT_EQ(all.fastest, 0u);
  EXPECT_FALSE(open_only_where_raced_again(configs, all, nhwc_next));
}

TEST(CarriedRounds, EachComparisonPairsTheRoundsBothMembersRan) {
  // Members 0 and 1 carry 10 rounds of an earlier stage; member 2 joins for the last 5
  // (kNotInRound before), 10 % slower than member 0 in each of them.
  const std::vector<RunConfig> configs{config(Layout::NHWC, "gemm", 2),
                                       config(Layout::NHWC, "direct", 2),
                                       config(Layout::NHWC, "winograd", 2)};
  std::vector<std::vector<double>> rounds(3);
  for (int r = 0; r < 15; ++r) {
    const double base = r < 10 ? 0.01 * (1 + 0.1 * (r % 4)) : 0.01;  // a drift, then none
    rounds[0].push_back(base);
    rounds[1].push_back(base * (r % 2 ? 1.08 : 0.95));
    rounds[2].push_back(r < 10 ? kNotInRound : base * 1.1);
  }
  const RoundsVerdict v = rounds_verdict(configs, rounds, 0.02, kAlpha, kPlainMean);
  ASSERT_EQ(v.fastest, 0u) << v.decision;
  ASSERT_EQ(v.comparisons.size(), 2u);
  EXPECT_EQ(v.comparisons[0].test.n, 15u);
  EXPECT_EQ(v.comparisons[1].test.n, 5u);
  EXPECT_NEAR(v.comparisons[1].ratio, 1.1, 1e-9);
  // Every one of its 5 rounds above every round of member 0 that it ran beside: the
  // separation test drops it (1/252 < 0.05 / 2), though member 0's earlier rounds (to
  // 13 ms) were slower than its own (11 ms).
  EXPECT_EQ(race_drops(rounds, 0.02, kAlpha, kPlainMean), (std::vector<size_t>{2}));
}

TEST(Ranking, TiersThenSpeedAndRacedOutNeverAboveAFullyMeasuredOne) {
  std::vector<TrialResult> trials{
      ok(config(Layout::NCHW, "direct"), 1000, StopRule::converged),
      ok(config(Layout::NCHW, "gemm"), 5000, StopRule::raced_out),  // fastest figure, cut short
      ok(config(Layout::NHWC, "gemm"), 1200, StopRule::max_steps),
      ok(config(Layout::NHWC, "direct"), 900, StopRule::time_cap),
  };
  TrialResult failed;
  failed.status = TrialStatus::failed;
  trials.push_back(failed);
  EXPECT_EQ(rank_ok_trials(trials), (std::vector<size_t>{2, 0, 3, 1}));
  trials[0].remeasured = true;
  EXPECT_EQ(rank_ok_trials(trials), (std::vector<size_t>{0, 2, 3, 1}));
  EXPECT_EQ(ranking_led_by(trials, 3), (std::vector<size_t>{3, 0, 2, 1}));
  EXPECT_EQ(rank_tiers(trials)[1], RankTier::cut_short);
}

// The members of the final rounds rank together by their rounds' figures: a member
// still racing when the verdict settled (its comparison decided, slower) sits below a
// faster one raced out at an earlier look, so no row ranks above a faster row of the
// same rounds. A sweep's raced-out candidate stays cut short.
TEST(Ranking, TheFinalRoundsRaceOutsRankWithTheirSurvivorsBySpeed) {
  std::vector<TrialResult> trials{
      ok(config(Layout::NHWC, "gemm"), 17000, StopRule::interleaved),
      ok(config(Layout::NHWC, "direct"), 13500, StopRule::interleaved),
      ok(config(Layout::NCHW, "gemm"), 15100, StopRule::raced_out),
      ok(config(Layout::NCHW, "direct"), 14000, StopRule::converged),
      ok(config(Layout::NCHW, "fft-own"), 30000, StopRule::raced_out),
  };
  trials[0].remeasured = trials[1].remeasured = true;
  trials[2].reason = std::string(kRemeasureReason) + " of 3 configs: raced out after 6 rounds";
  trials[4].reason = std::string(kSweepRaceReason) + "0.5x the speed of ...";
  EXPECT_TRUE(in_final_rounds(trials[0]));
  EXPECT_TRUE(in_final_rounds(trials[2]));
  EXPECT_FALSE(in_final_rounds(trials[3]));
  EXPECT_FALSE(in_final_rounds(trials[4]));
  EXPECT_EQ(rank_tiers(trials)[2], RankTier::remeasured);
  EXPECT_EQ(rank_tiers(trials)[4], RankTier::cut_short);
  EXPECT_EQ(rank_ok_trials(trials), (std::vector<size_t>{0, 2, 1, 3, 4}));
}

TEST(Ranking, OlderRowsRankLongerTimedFirst) {
  // Rows of a build without stop rules: a halving tune's finalists (6 steps) above a
  // candidate eliminated after 2 steps whatever its figure.
  std::vector<TrialResult> trials{ok(config(Layout::NCHW, "direct"), 1000, StopRule::none),
                                  ok(config(Layout::NHWC, "gemm"), 1900, StopRule::none),
                                  ok(config(Layout::NHWC, "direct"), 1200, StopRule::none)};
  trials[0].figures.steps = trials[2].figures.steps = 6;
  trials[1].figures.steps = 2;
  EXPECT_EQ(rank_ok_trials(trials), (std::vector<size_t>{2, 0, 1}));
}

TEST(SettleCandidates, TheTopFullyMeasuredThenThoseOverlappingTheLeaderUpToTheCap) {
  std::vector<TrialResult> trials{
      ok(config(Layout::NCHW, "direct"), 1000, StopRule::converged),     // leader [990, 1010]
      ok(config(Layout::NCHW, "gemm"), 900, StopRule::converged),        // [891, 909]
      ok(config(Layout::NHWC, "gemm"), 980, StopRule::converged, 0.02),  // [960.4, 999.6]: overlaps
      ok(config(Layout::NHWC, "direct"), 800, StopRule::converged),      // far below
      ok(config(Layout::NCHW, "fft"), 2000, StopRule::raced_out),        // cut short, far above
  };
  // Ranked: direct 1000, nhwc gemm 980, gemm 900, nhwc direct 800, then the raced out.
  // The top two, then only those overlapping the leader:
  EXPECT_EQ(settle_candidates(trials, 2), (std::vector<size_t>{0, 2}));
  trials[1].figures.eps_high = 995;  // now overlapping the leader too
  EXPECT_EQ(settle_candidates(trials, 2), (std::vector<size_t>{0, 2, 1}));
  EXPECT_EQ(settle_candidates(trials, 2, 2), (std::vector<size_t>{0, 2}));
  // No interval (too few steps, an older row): cannot be told apart, so settled.
  trials[3].figures.eps_low = trials[3].figures.eps_high = 0;
  EXPECT_EQ(settle_candidates(trials, 2), (std::vector<size_t>{0, 2, 1, 3}));
  // By default the top four whatever their intervals.
  trials[1].figures.eps_high = 909;
  trials[3] = ok(config(Layout::NHWC, "direct"), 800, StopRule::converged);
  EXPECT_EQ(settle_candidates(trials), (std::vector<size_t>{0, 2, 1, 3}));
  // A candidate raced out on a few noisy steps whose interval still reaches the leader's
  // is raced again in the rounds.
  trials[4].figures.median_eps = 950;
  trials[4].figures.eps_low = 700;
  trials[4].figures.eps_high = 1200;
  EXPECT_EQ(settle_candidates(trials), (std::vector<size_t>{0, 2, 1, 3, 4}));
  EXPECT_EQ(settle_candidates(trials, 4, 4), (std::vector<size_t>{0, 2, 1, 3}));
  // One fully measured candidate: nothing to settle.
  std::vector<TrialResult> alone{ok(config(Layout::NCHW, "direct"), 1000, StopRule::converged),
                                 ok(config(Layout::NCHW, "gemm"), 3000, StopRule::raced_out)};
  EXPECT_TRUE(settle_candidates(alone).empty());
}

TEST(PooledRounds, RoundByRoundEachRankInTurnKeepingTheMembersAligned) {
  // Rank 0: member 0 ran 4 rounds, member 1 was dropped after 3; rank 1 ran 2 rounds of
  // both (its share); rank 2 timed none (its rounds could not run).
  const std::vector<std::vector<double>> mine{{1, 2, 3, 4}, {10, 20, 30}};
  const std::vector<std::vector<std::vector<double>>> theirs{{{5, 6}, {50, 60}}, {{}, {}}};
  const auto pooled = pooled_rounds(mine, theirs);
  ASSERT_EQ(pooled.size(), 2u);
  EXPECT_EQ(pooled[0], (std::vector<double>{1, 5, 2, 6, 3, 4}));
  EXPECT_EQ(pooled[1], (std::vector<double>{10, 50, 20, 60, 30}));
  // Pair i of the two members is one rank's round: (1, 10), (5, 50), (2, 20), (6, 60), (3, 30).
  EXPECT_EQ(pooled_rounds(mine, {}), mine);  // alone: its own rounds
}

}  // namespace
}  // namespace tunescope::tuner
