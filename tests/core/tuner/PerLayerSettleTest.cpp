// The per-layer strategy's pick rests on whole-config interleaved rounds, not on the
// find: an algorithm that is fastest alone but slow in a network (kSlowInNetwork) is
// the find's pick on every layer, and still never the winner.
#include <gtest/gtest.h>

#include <string>

#include "TestAlgorithms.h"
#include "ZoneTestRounds.h"
#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/Ranking.h"
#include "core/tuner/Tuner.h"

namespace tunescope::tuner {
namespace {

// The tiny session's config with this layout, thread count and conv algorithm.
RunConfig config_of(Layout layout, int threads, const std::string& algorithm = "gemm") {
  SessionOptions s = test_support::tiny_session();
  knobs::layout.set(s.knobs, layout);
  knobs::threads.set(s.knobs, threads);
  s.conv.default_algorithm = algorithm;
  return run_config_of(s);
}

TEST(PerLayerSettle, TheFindsPickThatIsSlowInTheNetworkLosesTheRounds) {
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.algorithms = {test_support::kSlowInNetwork, test_support::kSlow};
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.knobs.set(knobs::threads, std::vector<int>{1});
  o.strategy = Strategy::per_layer;
  o.measure.warmup = 1;
  o.measure.steps = 3;
  o.measure.max_steps = 40;
  o.find.repetitions = 2;
  const TuneReport report = Tuner(o).run();

  ASSERT_FALSE(report.finds.empty());
  for (const LayerFind& f : report.finds)
    EXPECT_EQ(f.best, test_support::kSlowInNetwork) << f.layer;
  ASSERT_TRUE(report.best);
  const TrialResult& winner = report.winner();
  // The baseline (direct everywhere) is raced too, and beats the find's pick.
  EXPECT_EQ(winner.config.conv.default_algorithm, "direct") << winner.config.label();
  EXPECT_TRUE(winner.remeasured);
  EXPECT_TRUE(report.settled_in_rounds);
  bool raced_pick = false;
  for (const TrialResult& t : report.trials)
    if (t.config.conv.default_algorithm == test_support::kSlowInNetwork) {
      raced_pick = true;
      // Measured in the rounds: dropped from the race, or still in it when the sign-flip test
      // settled the comparison.
      EXPECT_EQ(t.status, TrialStatus::ok) << t.reason;
      EXPECT_TRUE(t.figures.stop == StopRule::raced_out || t.figures.stop == StopRule::interleaved)
          << t.reason;
      EXPECT_GE(t.figures.steps, 6);
      EXPECT_LT(t.figures.median_eps, winner.figures.median_eps);
    }
  EXPECT_TRUE(raced_pick) << "the find's pick was not measured as a whole config";
  // One ranking: the winner leads, and it is the rule's first.
  ASSERT_FALSE(report.ranking.empty());
  EXPECT_EQ(report.ranking.front(), *report.best);
  EXPECT_EQ(rank_ok_trials(report.trials).front(), *report.best);
}

// Per-layer's second stage races the other candidates of each (layout, threads) still
// racing after the first: a candidate joins when a member has its layout and its thread
// count, not one of the two alone, and then only with the run knobs of the fastest such
// member (here its cpu_binding), whatever its algorithms' own knobs; where no member has
// its layout and thread count, when it has a member's layout and algorithms.
TEST(PerLayerSettle, TheSecondStageTakesTheCandidatesOfTheLayoutsAndThreadsStillRacing) {
  RunConfig bound = config_of(Layout::NCHW, 2, "direct");
  knobs::cpu_binding.set(bound.knobs, CpuBinding::cores);
  const std::vector<RunConfig> members{config_of(Layout::NHWC, 1, "gemm"),
                                       config_of(Layout::NCHW, 2, "direct"), bound};
  RunConfig bound_gemm = config_of(Layout::NCHW, 2, "gemm");
  knobs::cpu_binding.set(bound_gemm.knobs, CpuBinding::cores);
  RunConfig tiled = config_of(Layout::NHWC, 1, "fft-own");
  tiled.knobs.set_text("fft_tile", "16");  // an algorithm's knob: not a run knob
  const std::vector<RunConfig> candidates{
      config_of(Layout::NHWC, 1, "direct"),  // joins: nhwc, 1 thread
      config_of(Layout::NHWC, 2, "direct"),  // nhwc, but 2 threads: no member
      config_of(Layout::NCHW, 1, "gemm"),    // 1 thread, but nchw: no member
      config_of(Layout::NCHW, 2, "gemm"),    // nchw, 2 threads, unbound as the fastest: joins
      bound_gemm,                            // bound, as the slower member only
      tiled,                                 // joins: nhwc, 1 thread
  };
  // The unbound member of nchw, 2 threads the faster: unbound candidates go on; the bound
  // one the faster: bound ones.
  EXPECT_EQ(second_stage_candidates(members, {100, 90, 80}, candidates),
            (std::vector<size_t>{0, 3, 5}));
  EXPECT_EQ(second_stage_candidates(members, {100, 90, 95}, candidates),
            (std::vector<size_t>{0, 4, 5}));
  EXPECT_TRUE(second_stage_candidates({}, {}, candidates).empty());

  // A (layout, threads) no survivor has: a survivor's own algorithms there join, with
  // every run knob (that survivor's picks at another thread count); others do not.
  RunConfig nhwc_gemm_bound = config_of(Layout::NHWC, 2, "gemm");
  knobs::cpu_binding.set(nhwc_gemm_bound.knobs, CpuBinding::cores);
  const std::vector<RunConfig> elsewhere{
      config_of(Layout::NHWC, 2, "gemm"),    // the nhwc survivor's gemm at 2 threads: joins
      nhwc_gemm_bound,                       // and bound: joins
      config_of(Layout::NHWC, 2, "direct"),  // not a survivor's algorithms
      config_of(Layout::NCHW, 1, "direct"),  // nchw's survivors' direct at 1 thread: joins
      config_of(Layout::NCHW, 4, "gemm"),    // not nchw's survivors' algorithms
  };
  EXPECT_EQ(second_stage_candidates(members, {100, 90, 80}, elsewhere),
            (std::vector<size_t>{0, 1, 3}));
}

TEST(RaceDrops, DropsOnlyTheSignificantlySlowerAtTheCorrectedLevel) {
  // Member 0 the fastest, 1 consistently 10% slower, 2 alternately 1% either side. The
  // drift shared by all is wider than the gap, so no member's rounds all lie above the
  // fastest's (the separation test): the sign flips decide.
  std::vector<std::vector<double>> rounds(3);
  for (int r = 0; r < 12; ++r) {
    const double base = 0.01 * (1 + 0.15 * (r % 3));
    rounds[0].push_back(base);
    rounds[1].push_back(base * 1.10);
    rounds[2].push_back(base * (r % 2 ? 1.01 : 0.99));
  }
  EXPECT_EQ(race_drops(rounds, 0.02), (std::vector<size_t>{1}));
  // One-sided: five slower rounds give p = 2^-5 = 0.031, not below 0.05 / 2 for two
  // comparisons; six give 2^-6 = 0.016, below it.
  std::vector<std::vector<double>> early(3);
  for (size_t i = 0; i < 3; ++i) early[i].assign(rounds[i].begin(), rounds[i].begin() + 5);
  EXPECT_TRUE(race_drops(early, 0.02).empty());
  for (size_t i = 0; i < 3; ++i) early[i].push_back(rounds[i][5]);
  EXPECT_EQ(race_drops(early, 0.02), (std::vector<size_t>{1}));
  // A dropped member (fewer rounds) is no longer racing and never dropped again.
  rounds[1].resize(8);
  EXPECT_EQ(racing_members(rounds), (std::vector<size_t>{0, 2}));
  EXPECT_TRUE(race_drops(rounds, 0.02).empty());
  // 1% slower, significant, but below delta/2 of 2%: kept.
  std::vector<std::vector<double>> close(2);
  for (int r = 0; r < 20; ++r) {
    close[0].push_back(0.01);
    close[1].push_back(0.0100 * 1.009);
  }
  EXPECT_TRUE(race_drops(close, 0.02).empty());
  EXPECT_EQ(race_drops(close, 0.01), (std::vector<size_t>{1}));
}

// A member far behind the fastest in every round leaves after 5 rounds by the separation
// test (1/252 below 0.05 / 6 for seven members), where the sign flips would need 7
// (2^-5 = 1/32 is not below it). One round of it that overlaps the fastest's keeps it,
// and with fourteen members (0.05 / 13 < 1/252) it waits for the 6th round (2 / 924).
TEST(RaceDrops, AFarSlowerMemberLeavesAfterFiveRoundsBySeparation) {
  auto race = [](size_t members, size_t rounds, double overlap_round_factor) {
    std::vector<std::vector<double>> series(members);
    for (size_t r = 0; r < rounds; ++r) {
      const double base = 0.01 * (1 + 0.05 * static_cast<double>(r % 3));
      for (size_t m = 0; m + 1 < members; ++m)
        series[m].push_back(base * (1 + 0.004 * static_cast<double>(m)));
      series[members - 1].push_back(base * (r == 2 ? overlap_round_factor : 1.5));
    }
    return series;
  };
  EXPECT_TRUE(race_drops(race(7, 4, 1.5), 0.02).empty()) << "4 rounds: no look yet";
  EXPECT_EQ(race_drops(race(7, 5, 1.5), 0.02), (std::vector<size_t>{6}));
  EXPECT_TRUE(race_drops(race(7, 5, 1.0), 0.02).empty()) << "one round level with the rest";
  EXPECT_TRUE(race_drops(race(14, 5, 1.5), 0.02).empty()) << "1/252 > 0.05 / 13";
  EXPECT_EQ(race_drops(race(14, 6, 1.5), 0.02), (std::vector<size_t>{13}));
  // The look's drops say which test found it, for the member's reason.
  const RoundDrops drops =
      round_drops(std::vector<RunConfig>(7, config_of(Layout::NHWC, 2)), race(7, 5, 1.5), 0.02);
  EXPECT_EQ(drops.slower, (std::vector<size_t>{6}));
  EXPECT_EQ(drops.by_separation, (std::vector<size_t>{6}));
}

// Per-layer's first stage: rounds that stop settled still drop, at that last look, a
// member slower with confidence (resnet18-small's one-thread pick, 1.9x slower, went on
// to the second stage with its (layout, threads) before), never the verdict's winner.
TEST(LastLookDrops, TheSlowerWithConfidenceLeaveTheWinnerStays) {
  const std::vector<RunConfig> configs{config_of(Layout::NCHW, 1), config_of(Layout::NHWC, 1),
                                       config_of(Layout::NHWC, 2)};
  // 2 the fastest; 1 1.9x slower every round; 0 (simpler) 0.5 % slower: a tie it wins.
  std::vector<std::vector<double>> rounds(3);
  for (int r = 0; r < 8; ++r) {
    const double base = 0.2 * (1 + 0.05 * (r % 3));
    rounds[2].push_back(base);
    rounds[1].push_back(base * 1.9);
    rounds[0].push_back(base * (r % 2 ? 1.01 : 1.0));
  }
  const RoundsVerdict verdict = rounds_verdict(configs, rounds, 0.02);
  ASSERT_EQ(verdict.fastest, 2u);
  EXPECT_EQ(last_look_drops(rounds, verdict, 0.02), (std::vector<size_t>{1}));
  // A winner that race_drops would name is kept: here the verdict says 1 won.
  RoundsVerdict other = verdict;
  other.winner = 1;
  EXPECT_TRUE(last_look_drops(rounds, other, 0.02).empty());
}

// The first stage's rounds stop once the verdict is settled, which at 6 rounds can rest
// on its two-sided test at alpha alone (6 of 6 rounds slower: p = 0.031) while race_drops
// needs alpha / 4 one-sided for 5 members (1/64): the verdict's significant losers by
// more than delta/2 leave too (a loaded resnet18-small tune took all 5 members, and 16
// configs, to the second stage). A member 0.5 % slower stays.
TEST(LastLookDrops, TheVerdictsSignificantLosersLeaveAfterSixRounds) {
  const std::vector<RunConfig> configs{config_of(Layout::NCHW, 1), config_of(Layout::NCHW, 2),
                                       config_of(Layout::NHWC, 1), config_of(Layout::NHWC, 2),
                                       config_of(Layout::NHWC, 2, "direct")};
  std::vector<std::vector<double>> rounds(5);
  for (int r = 0; r < 6; ++r) {
    const double base = 0.1 * (1 + 0.25 * (r % 3));  // wider than the gaps: no separation
    rounds[3].push_back(base);
    rounds[0].push_back(base * 1.5);
    rounds[1].push_back(base * 1.2);
    rounds[2].push_back(base * 1.1);
    rounds[4].push_back(base * (r % 2 ? 1.01 : 1.0));
  }
  EXPECT_TRUE(race_drops(rounds, 0.02).empty()) << "1/64 > 0.05 / 4";
  const RoundsVerdict verdict = rounds_verdict(configs, rounds, 0.02);
  ASSERT_EQ(verdict.fastest, 3u);
  EXPECT_EQ(last_look_drops(rounds, verdict, 0.02), (std::vector<size_t>{0, 1, 2}));
  RoundsVerdict other = verdict;  // never the winner
  other.winner = 1;
  EXPECT_EQ(last_look_drops(rounds, other, 0.02), (std::vector<size_t>{0, 2}));
}

// One look's drops never leave fewer than two members racing: the verdict's test decides
// between the last two, and its decision names the comparison.
TEST(RoundDrops, NeverLeaveFewerThanTwoRacing) {
  // 0 the fastest (nhwc, 2 threads); 1 and 3 10 % slower every round; 2 as complex as 0
  // and 0.5 % slower: indifferent.
  const std::vector<RunConfig> configs{config_of(Layout::NHWC, 2), config_of(Layout::NHWC, 2),
                                       config_of(Layout::NHWC, 2), config_of(Layout::NHWC, 2)};
  std::vector<std::vector<double>> rounds(4);
  for (int r = 0; r < 12; ++r) {
    const double base = 0.01 * (1 + 0.1 * (r % 4));
    rounds[0].push_back(base);
    rounds[1].push_back(base * 1.10);
    rounds[2].push_back(base * 1.005);
    rounds[3].push_back(base * 1.10);
  }
  // Four racing, three to drop: one would be left, so none leaves at this look.
  EXPECT_TRUE(round_drops(configs, rounds, 0.02).slower.empty());
  EXPECT_TRUE(round_drops(configs, rounds, 0.02).indifferent.empty());
  // Member 3 already out (fewer rounds): of three racing, two to drop would leave one.
  rounds[3].resize(6);
  EXPECT_TRUE(round_drops(configs, rounds, 0.02).slower.empty());
  // Five racing (a simpler one as fast as 0, which stays): three drops leave two.
  std::vector<RunConfig> five = configs;
  five.push_back(config_of(Layout::NCHW, 1));
  rounds[3] = rounds[1];
  rounds.push_back(rounds[0]);
  const RoundDrops drops = round_drops(five, rounds, 0.02);
  EXPECT_EQ(drops.slower, (std::vector<size_t>{1, 3}));
  EXPECT_EQ(drops.indifferent, (std::vector<size_t>{2}));
}

// The indifference zone: a member that is not simpler than the fastest and is shown, by
// a one-sided bound at the Bonferroni level, to be no more than delta faster cannot change
// the pick by more than delta; it leaves the race. A simpler one stays (it may win the tie
// rule), and so does one whose bound still allows it to be more than delta faster.
TEST(IndifferentDrops, DropsOnlyMembersWithinDeltaThatCannotWinTheTieRule) {
  // 0 the fastest; 1 as complex as 0 (not simpler); 2 simpler (nchw, one thread).
  const std::vector<RunConfig> configs{config_of(Layout::NHWC, 2), config_of(Layout::NHWC, 2),
                                       config_of(Layout::NCHW, 1)};
  ASSERT_FALSE(simpler(configs[1], configs[0]));
  ASSERT_TRUE(simpler(configs[2], configs[0]));
  // Members 1 and 2 are 0.5 % slower than 0 in every round, under a drift all share.
  std::vector<std::vector<double>> rounds(3);
  for (int r = 0; r < 12; ++r) {
    const double base = 0.01 * (1 + 0.1 * (r % 4));
    rounds[0].push_back(base);
    rounds[1].push_back(base * 1.005);
    rounds[2].push_back(base * 1.005);
  }
  EXPECT_EQ(indifferent_drops(configs, rounds, 0.02), (std::vector<size_t>{1}));
  // Five rounds: the one-sided bound at 0.05 / 2 is not bounded yet (needs 2^-n <= 0.025).
  std::vector<std::vector<double>> early(3);
  for (size_t i = 0; i < 3; ++i) early[i].assign(rounds[i].begin(), rounds[i].begin() + 5);
  EXPECT_TRUE(indifferent_drops(configs, early, 0.02).empty());
  // Six rounds are enough (2^-6 <= 0.025): the two-sided interval at 1 - 0.05 / 2 needed 2^-n
  // <= 0.0125, seven rounds.
  for (size_t i = 0; i < 3; ++i) early[i].push_back(rounds[i][5]);
  EXPECT_EQ(indifferent_drops(configs, early, 0.02), (std::vector<size_t>{1}));
  // Member 1 alternately 6 % faster and 4 % slower: the fastest now, and member 0's bound
  // against it reaches below 1 - delta.
  for (int r = 0; r < 12; ++r) rounds[1][r] = rounds[0][r] * (r % 2 ? 0.94 : 1.04);
  EXPECT_TRUE(indifferent_drops(configs, rounds, 0.02).empty());
  // Configs and round series must pair up.
  EXPECT_THROW(indifferent_drops({configs[0]}, rounds, 0.02), Error);
}

// The claims step down (Holm): once a member far behind is shown not to be delta faster,
// a close one's claim is tested at alpha rather than alpha / 2, and it leaves the race.
TEST(IndifferentDrops, AClaimShownAgainstAFarMemberLowersTheCloseOnesLevel) {
  const std::vector<RunConfig> configs(3, config_of(Layout::NHWC, 2));
  // Member 1 close to member 0 (its one-sided bound 0.986 at alpha, below 0.98 at
  // alpha / 2); member 2 20% slower in every round.
  const std::vector<double> close = test_support::close_member_ratios();
  std::vector<std::vector<double>> rounds =
      test_support::rounds_against_fastest({close, std::vector<double>(close.size(), 1.2)});
  EXPECT_EQ(indifferent_drops(configs, rounds, 0.02, kAlpha, 0), (std::vector<size_t>{1, 2}));
  // Without the far member the close one is tested at alpha alone, and leaves too.
  const std::vector<std::vector<double>> pair{rounds[0], rounds[1]};
  EXPECT_EQ(indifferent_drops({configs[0], configs[1]}, pair, 0.02, kAlpha, 0),
            (std::vector<size_t>{1}));
  // With a second close member instead, no claim is shown at alpha / 2: neither leaves.
  rounds[2] = rounds[1];
  EXPECT_TRUE(indifferent_drops(configs, rounds, 0.02, kAlpha, 0).empty());
}

}  // namespace
}  // namespace tunescope::tuner
