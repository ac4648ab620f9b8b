// A tune's candidates spread over ranks (core/tuner/DistributedTune.h) without MPI: two
// ranks as threads (tests/core/LoopbackRanks.h) take disjoint shares (each its own first
// position, then the next one free) that together are the whole list, every trial lands
// in rank 0's DB once, and a resumed tune on rank 0 then reuses them all and settles the
// leaders. The real `mpirun -np 2 tunescope tune`
// is in tests/cli/MpiCliTest.cpp.
#include "core/tuner/DistributedTune.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "TempResultsDb.h"
#include "TestAlgorithms.h"
#include "core/engine/RunKnobs.h"
#include "tests/core/LoopbackRanks.h"

namespace tunescope::tuner {
namespace {

TuneOptions four_candidates() {
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW, Layout::NHWC});
  o.knobs.set(knobs::threads, std::vector<int>{1});
  o.algorithms = {"direct", "gemm"};
  o.strategy = Strategy::exhaustive;
  o.measure.warmup = 0;
  o.measure.steps = 2;
  o.racing = false;
  return o;
}

TEST(DistributedTune, SharedPositionsStartEachRankAtItsOwnThenHandOutTheRestOnce) {
  SharedPositions positions(3);  // ranks 0, 1 and 2 start at positions 0, 1 and 2
  EXPECT_EQ(positions.take(5), std::optional<size_t>(3));
  EXPECT_EQ(positions.take(5), std::optional<size_t>(4));
  EXPECT_EQ(positions.take(5), std::nullopt);
  EXPECT_EQ(positions.take(5), std::nullopt);  // used up stays used up

  // Taken from several threads at once, every position once.
  SharedPositions shared(1);
  std::vector<std::vector<size_t>> taken(4);
  std::vector<std::thread> threads;
  for (auto& mine : taken)
    threads.emplace_back([&] {
      while (const std::optional<size_t> p = shared.take(1000)) mine.push_back(*p);
    });
  for (std::thread& t : threads) t.join();
  std::vector<size_t> all;
  for (const auto& mine : taken) all.insert(all.end(), mine.begin(), mine.end());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), 999u);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], i + 1);
}

TEST(DistributedTune, TwoRanksMeasureDisjointSharesGatheredIntoRankZerosDb) {
  const test_support::TempResultsDb file("distributed-tune.sqlite");
  ResultsDb db(file.path);
  const TuneOptions options = four_candidates();
  std::mutex mutex;
  std::map<std::string, std::vector<int>> measured_by;  // label -> ranks
  size_t gathered = 0;
  std::vector<ShareCost> shares;
  tunescope::test_support::run_ranks(2, [&](Communicator& ranks) {
    check_same_machines(ranks, options.base.backend);  // one machine: passes
    const SweepOutcome outcome = sweep_shares(options, ranks, ranks.rank() == 0 ? &db : nullptr,
                                              [&](int rank, const TrialResult& trial) {
                                                const std::lock_guard lock(mutex);
                                                measured_by[trial.config.label()].push_back(rank);
                                              });
    if (ranks.rank() == 0) {
      gathered = outcome.gathered;
      shares = outcome.shares;
    }
  });
  ASSERT_EQ(measured_by.size(), 4u);
  std::map<int, int> per_rank;
  for (const auto& [label, ranks] : measured_by) {
    ASSERT_EQ(ranks.size(), 1u) << label << " measured more than once";
    ++per_rank[ranks.front()];
  }
  // Each rank starts at a position of its own; the rest go to whichever asks first.
  EXPECT_GE(per_rank[0], 1);
  EXPECT_GE(per_rank[1], 1);
  EXPECT_EQ(per_rank[0] + per_rank[1], 4);
  EXPECT_EQ(gathered, 4u);
  // Every rank's cost reached rank 0, its trials counted as each rank reported them.
  ASSERT_EQ(shares.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(shares[static_cast<size_t>(r)].rank, r);
    EXPECT_EQ(shares[static_cast<size_t>(r)].trials, static_cast<size_t>(per_rank[r]));
    EXPECT_GT(shares[static_cast<size_t>(r)].reference.wall_seconds, 0);
    EXPECT_GT(shares[static_cast<size_t>(r)].sweep.wall_seconds, 0);
  }
  EXPECT_NE(to_string(shares[1]).find("rank 1's share: reference "), std::string::npos);
  const std::vector<TrialRecord> stored = db.trials();
  ASSERT_EQ(stored.size(), 4u);
  EXPECT_EQ(db.tuned_pairs().size(), 1u);  // one problem, one machine: rank 1's rows too

  // Rank 0 then settles: every candidate reused, the leaders raced in rounds.
  TuneOptions settle = options;
  settle.resume = true;
  const TuneReport report = Tuner(settle, &db).run();
  EXPECT_EQ(report.reused, 4u);
  EXPECT_TRUE(report.best_trial());
}

// A stand-in for the other ranks of the final rounds: told the leaders, it sends
// `rounds` per leader after `late` looks (never when late < 0).
class FakePartners final : public RoundsPartners {
 public:
  FakePartners(int late, std::vector<double> rounds) : late_(late), rounds_(std::move(rounds)) {}
  void start(const std::vector<RunConfig>& leaders) override { leaders_ = leaders; }
  std::optional<std::vector<std::vector<std::vector<double>>>> rounds_if_sent() override {
    ++looks_;
    if (late_ < 0 || looks_ <= late_) return std::nullopt;
    return std::vector<std::vector<std::vector<double>>>{
        std::vector<std::vector<double>>(leaders_.size(), rounds_)};
  }
  std::vector<RunConfig> leaders_;
  int looks_ = 0;

 private:
  int late_;
  std::vector<double> rounds_;
};

// The count in the verdict: "... over N interleaved rounds, ...".
int64_t verdict_rounds(const std::string& decision) {
  const std::string over = "paired log step-time ratio over ";
  const size_t at = decision.find(over);
  return at == std::string::npos ? -1 : std::stoll(decision.substr(at + over.size()));
}

TEST(DistributedTune, FinalRoundsPoolThePartnersRoundsOnceSentAndRaceOnAloneBefore) {
  TuneOptions options = four_candidates();
  options.measure.rounds_ranks = 2;  // this rank's share: 3 of the 6 rounds at least
  // The partner's rounds say nothing (every leader alike: log ratio 0), so the verdict
  // still needs this rank's own rounds; they only add to its count.
  for (const int late : {0, 2, -1}) {
    SCOPED_TRACE(late);
    FakePartners partners(late, {0.01, 0.01, 0.01});
    options.rounds_partners = &partners;
    const TuneReport report = Tuner(options).run();
    ASSERT_GE(partners.leaders_.size(), 2u);  // the leaders raced here were sent
    EXPECT_GE(partners.looks_, 1);
    const TrialResult& winner = report.winner();
    ASSERT_TRUE(winner.remeasured) << report.decision;
    EXPECT_GE(winner.figures.steps, 3);
    const int64_t own = winner.figures.steps;
    // Pooled from the first look that found them: 3 more rounds; never found: its own.
    EXPECT_EQ(verdict_rounds(report.decision), late < 0 ? own : own + 3) << report.decision;
    if (late < 0) {
      EXPECT_GE(own, 6) << "alone, the paired test needs 6 rounds of its own";
    }
    if (late == 0) {
      EXPECT_EQ(partners.looks_, 1) << "asked until it has them, then never again";
    }
  }
}

}  // namespace
}  // namespace tunescope::tuner
