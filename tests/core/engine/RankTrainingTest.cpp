// Ranks without MPI: two ranks as threads (tests/core/LoopbackRanks.h) train with the
// same per-step losses as one process on the same global batch, whatever the bucket
// size, overlap and async update; every rank ends with the same weights; the all-reduce
// is traced as named kernels. The MPI path itself: tests/cli/MpiCliTest.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"
#include "tests/core/LoopbackRanks.h"

namespace tunescope {
namespace {

// Loss of the global batch at each step. The ranks' sums differ from the single
// process's only by float reassociation (halves of each batch summed apart): 1e-4 relative
// covers the few steps run here with a wide margin (the mpirun run of tests/cli/MpiCliTest
// differed by about 1e-7 over 10 lenet5 steps).
constexpr double kLossTolerance = 1e-4;

SessionOptions small_run(const std::string& model, int64_t batch) {
  SessionOptions options;
  options.model = model;
  options.data = "fake";
  options.fake_train_count = 96;
  options.fake_test_count = 16;
  options.batch = batch;
  options.prefetch = 0;
  knobs::threads.set(options.knobs, 1);
  return options;
}

std::vector<double> step_losses(TrainingSession& session, int64_t steps) {
  std::vector<double> losses;
  double before = 0;
  session.train_steps(steps, [&](int64_t, int64_t, const StepStats& so_far) {
    losses.push_back((so_far.loss_sum - before) / static_cast<double>(session.options().batch));
    before = so_far.loss_sum;
  });
  return losses;
}

std::vector<float> weights(TrainingSession& session) {
  std::vector<float> all;
  for (const Parameter* p : session.network().parameters())
    all.insert(all.end(), p->value.data(), p->value.data() + p->value.size());
  return all;
}

struct RankRun {
  std::vector<std::vector<double>> losses;  // per rank
  std::vector<std::vector<float>> weights;
  std::vector<std::vector<std::string>> kernels;
  std::vector<std::map<std::string, std::string>> metadata;
};

RankRun run_two_ranks(const SessionOptions& options, int64_t steps, bool trace = false) {
  RankRun run;
  run.losses.resize(2);
  run.weights.resize(2);
  run.kernels.resize(2);
  run.metadata.resize(2);
  test_support::run_ranks(2, [&](Communicator& communicator) {
    SessionOptions mine = options;
    mine.ranks = &communicator;
    TrainingSession session(mine);
    const auto r = static_cast<size_t>(communicator.rank());
    if (trace) session.tracer().start();
    run.losses[r] = step_losses(session, steps);
    if (trace) {
      session.tracer().stop();
      for (const auto& activity : session.tracer().collect({}).activities)
        run.kernels[r].push_back(activity.name);
      run.metadata[r] = session.rank_trace_metadata();
    }
    run.weights[r] = weights(session);
  });
  return run;
}

void expect_same_losses(const std::vector<double>& expected, const std::vector<double>& got) {
  ASSERT_EQ(expected.size(), got.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], kLossTolerance * std::abs(expected[i])) << "step " << i;
}

struct Variant {
  const char* name;
  int bucket_kb;
  bool overlap;
  bool async;
  int64_t batch;
};

void PrintTo(const Variant& v, std::ostream* out) { *out << v.name; }

class RankTraining : public ::testing::TestWithParam<Variant> {};

TEST_P(RankTraining, TwoRanksTrainLenetLikeOneProcessOfTheGlobalBatch) {
  const Variant v = GetParam();
  SessionOptions options = small_run("lenet5", v.batch);
  knobs::async_update.set(options.knobs, v.async);
  knobs::allreduce_bucket_kb.set(options.knobs, v.bucket_kb);
  knobs::allreduce_overlap.set(options.knobs, v.overlap);
  std::vector<double> reference;
  {
    TrainingSession single(options);
    reference = step_losses(single, 4);
  }
  const RankRun run = run_two_ranks(options, 4);
  expect_same_losses(reference, run.losses[0]);
  EXPECT_EQ(run.losses[0], run.losses[1]);    // both ranks report the global batch's loss
  EXPECT_EQ(run.weights[0], run.weights[1]);  // the same sum on every rank: the same weights
}

INSTANTIATE_TEST_SUITE_P(Buckets, RankTraining,
                         ::testing::Values(Variant{"layer_buckets", 0, true, false, 16},
                                           Variant{"default", 512, true, false, 16},
                                           Variant{"no_overlap", 64, false, false, 16},
                                           Variant{"async", 64, true, true, 16},
                                           Variant{"async_no_overlap", 0, false, true, 16},
                                           Variant{"uneven_batch", 512, true, false, 15}),
                         [](const auto& info) { return std::string(info.param.name); });

// Batch norm normalises over each rank's shard (as in-process replicas do), so the one
// process to compare with splits the batch into the same two shards: --replicas 2.
TEST(RankTraining, TwoRanksTrainResnetLikeTwoReplicasOfOneProcess) {
  SessionOptions options = small_run("resnet18-small", 8);
  std::vector<double> reference;
  {
    SessionOptions replicas = options;
    knobs::replicas.set(replicas.knobs, 2);
    TrainingSession single(replicas);
    reference = step_losses(single, 2);
  }
  knobs::allreduce_bucket_kb.set(options.knobs, 128);
  const RankRun run = run_two_ranks(options, 2);
  expect_same_losses(reference, run.losses[0]);
  EXPECT_EQ(run.weights[0], run.weights[1]);
}

TEST(RankTraining, TracesTheAllReduceAsNamedKernelsAndTheRankMetadata) {
  SessionOptions options = small_run("lenet5", 16);
  knobs::allreduce_bucket_kb.set(options.knobs, 0);  // one bucket per layer: 7 in lenet5
  const RankRun run = run_two_ranks(options, 2, true);
  for (int r = 0; r < 2; ++r) {
    const auto& kernels = run.kernels[static_cast<size_t>(r)];
    for (const char* name : {"allreduce.bucket0", "allreduce.bucket4"})
      EXPECT_EQ(std::count(kernels.begin(), kernels.end(), name), 2) << name << " rank " << r;
    const auto& metadata = run.metadata[static_cast<size_t>(r)];
    EXPECT_EQ(metadata.at("rank"), std::to_string(r));
    EXPECT_EQ(metadata.at("world_size"), "2");
    EXPECT_TRUE(metadata.contains("clock_offset_ns"));
    EXPECT_TRUE(metadata.contains("clock_offset_uncertainty_ns"));
  }
  // Threads of one process share one clock: the offset is 0 within its uncertainty.
  EXPECT_LE(std::abs(std::stoll(run.metadata[1].at("clock_offset_ns"))),
            std::stoll(run.metadata[1].at("clock_offset_uncertainty_ns")));
}

TEST(RankTraining, RefusesABatchSmallerThanTheRanks) {
  SessionOptions options = small_run("lenet5", 1);
  EXPECT_THROW(run_two_ranks(options, 1), Error);
}

}  // namespace
}  // namespace tunescope
