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
  o.base = testing::tiny_session();
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
  const testing::TempResultsDb file("distributed-tune.sqlite");
  ResultsDb db(file.path);
  const TuneOptions options = four_candidates();
  std::mutex mutex;
  std::map<std::string, std::vector<int>> measured_by;  // label -> ranks
  size_t gathered = 0;
  std::vector<ShareCost> shares;
  tunescope::testing::run_ranks(2, [&](Communicator& ranks) {
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
  EXPECT_NE(to_string(shares[1]).find("rank 1: reference "), std::string::npos);
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

}  // namespace
}  // namespace tunescope::tuner
