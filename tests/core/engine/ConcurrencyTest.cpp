// The concurrency knobs must not change what is learnt: streams, async update and the
// batch split (replicas x micro-batches) follow the single-lane loss trajectory and end
// at the same weights, up to the reassociation of float sums; the trace shows the lanes.
//
// Tolerances: 5e-4 relative on each step's mean loss and 2e-3 of the largest |weight|
// per parameter after 4 SGD steps. Reordered sums (all-reduce, accumulated
// micro-batches, per-shard softmax means) differ by ~1e-6 relative per step; a missed
// dependency (a stale weight, a gradient read before it is written) moves the loss by
// 1e-2 or more. The split is checked on lenet5, which has no batch norm: with batch norm
// each replica and micro-batch normalises over its own shard (per-replica statistics, as
// in real data-parallel training), which is a different computation.
#include "core/engine/TrainingSession.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"

namespace tunescope {
namespace {

struct Trajectory {
  std::vector<double> losses;
  std::vector<Tensor> weights;  // replica 0's parameters after the last step
};

SessionOptions small_options(const std::string& model, Layout layout) {
  SessionOptions options;
  options.model = model;
  options.data = "fake";
  options.fake_train_count = 64;
  options.fake_test_count = 8;
  options.batch = model == "lenet5" ? 16 : 8;
  knobs::threads.set(options.knobs, 2);
  knobs::layout.set(options.knobs, layout);
  options.conv = parse_conv_choice("gemm");
  options.prefetch = 0;
  return options;
}

Trajectory train(const SessionOptions& options, int steps) {
  TrainingSession session(options);
  Trajectory t;
  // One call keeps async updates overlapped between steps (separate calls would drain
  // them); each step's loss is the growth of the running sum.
  double before = 0;
  session.train_steps(steps, [&](int64_t, int64_t, const StepStats& so_far) {
    t.losses.push_back((so_far.loss_sum - before) / static_cast<double>(options.batch));
    before = so_far.loss_sum;
  });
  for (const Parameter* p : session.network().parameters()) t.weights.push_back(p->value);
  return t;
}

void expect_same(const Trajectory& reference, const Trajectory& got, const std::string& what) {
  ASSERT_EQ(reference.losses.size(), got.losses.size()) << what;
  for (size_t i = 0; i < reference.losses.size(); ++i)
    EXPECT_NEAR(got.losses[i], reference.losses[i],
                5e-4 * std::max(1.0, std::abs(reference.losses[i])))
        << what << " step " << i;
  ASSERT_EQ(reference.weights.size(), got.weights.size()) << what;
  for (size_t p = 0; p < reference.weights.size(); ++p) {
    const Tensor& a = reference.weights[p];
    const Tensor& b = got.weights[p];
    ASSERT_EQ(a.size(), b.size());
    float scale = 0, error = 0;
    for (int64_t i = 0; i < a.size(); ++i) {
      scale = std::max(scale, std::abs(a.data()[i]));
      error = std::max(error, std::abs(a.data()[i] - b.data()[i]));
    }
    EXPECT_LE(error, 2e-3f * scale) << what << " parameter " << p;
  }
}

class ConcurrencyLayouts : public ::testing::TestWithParam<Layout> {};

TEST_P(ConcurrencyLayouts, LenetFollowsTheSingleLaneTrajectory) {
  const SessionOptions base = small_options("lenet5", GetParam());
  const Trajectory reference = train(base, 4);
  struct Case {
    const char* name;
    Concurrency knobs;
  };
  const Case cases[] = {
      {"streams=2", {2, 1, 1, false, 0}},
      {"streams=4", {4, 1, 1, false, 0}},
      {"streams=2 async", {2, 1, 1, true, 0}},
      {"streams=1 async", {1, 1, 1, true, 0}},
      {"replicas=2", {1, 2, 1, false, 0}},
      {"micro=2", {1, 1, 2, false, 0}},
      {"streams=2 async replicas=2 micro=2", {2, 2, 2, true, 1}},
  };
  for (const Case& c : cases) {
    SessionOptions options = base;
    knobs::set_concurrency(options.knobs, c.knobs);
    expect_same(reference, train(options, 4), c.name);
  }
}

INSTANTIATE_TEST_SUITE_P(BothLayouts, ConcurrencyLayouts,
                         ::testing::Values(Layout::NCHW, Layout::NHWC),
                         [](const auto& info) { return to_string(info.param); });

TEST(Concurrency, ResnetWithStreamsAndAsyncUpdateFollowsTheSingleLaneTrajectory) {
  // No split: batch norm sees the same batch, so the result must match.
  const SessionOptions base = small_options("resnet18-small", Layout::NHWC);
  SessionOptions overlapped = base;
  knobs::set_concurrency(overlapped.knobs, {2, 1, 1, true, 0});
  expect_same(train(base, 2), train(overlapped, 2), "resnet streams=2 async");
}

TEST(Concurrency, SplitGradientEqualsTheWholeBatchGradient) {
  // After one step replica 0 holds the all-reduced gradient of the whole batch.
  auto gradients = [](Concurrency knobs) {
    SessionOptions options = small_options("lenet5", Layout::NCHW);
    knobs::set_concurrency(options.knobs, knobs);
    TrainingSession session(options);
    session.train_steps(1);
    std::vector<Tensor> out;
    for (const Parameter* p : session.network().parameters()) out.push_back(p->grad);
    return out;
  };
  const auto whole = gradients({});
  for (Concurrency knobs : {Concurrency{1, 2, 1, false, 0}, Concurrency{2, 2, 2, false, 0},
                            Concurrency{1, 1, 4, false, 0}}) {
    const auto split = gradients(knobs);
    ASSERT_EQ(split.size(), whole.size());
    for (size_t p = 0; p < whole.size(); ++p) {
      float scale = 0, error = 0;
      for (int64_t i = 0; i < whole[p].size(); ++i) {
        scale = std::max(scale, std::abs(whole[p].data()[i]));
        error = std::max(error, std::abs(whole[p].data()[i] - split[p].data()[i]));
      }
      EXPECT_LE(error, 1e-4f * scale) << knobs.label() << " parameter " << p;
    }
  }
}

TEST(Concurrency, SplitThatDoesNotDivideTheBatchIsAUsageError) {
  SessionOptions options = small_options("lenet5", Layout::NCHW);
  knobs::replicas.set(options.knobs, 3);  // 16 examples
  try {
    TrainingSession session(options);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("does not split into 3 replicas"), std::string::npos)
        << e.what();
  }
  knobs::set_concurrency(options.knobs, {});
  knobs::streams.set(options.knobs, 0);
  EXPECT_THROW(TrainingSession{options}, Error);
}

TEST(Concurrency, ValidateNamesTheConfigKeysNotFlags) {
  auto message = [](const Concurrency& c, int64_t batch) {
    try {
      c.validate(batch);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  Concurrency c;
  c.micro_batches = 0;
  EXPECT_EQ(message(c, 8), "micro_batches must be >= 1, got 0");
  c = {};
  c.threads_per_lane = -1;
  EXPECT_EQ(message(c, 8), "threads_per_lane must be >= 0, got -1");
  c = {};
  c.replicas = 3;
  EXPECT_EQ(message(c, 8).rfind("batch 8 does not split into 3 replicas", 0), 0u) << message(c, 8);
}

TEST(Concurrency, TraceShowsWhatRunsOnWhichLane) {
  SessionOptions options = small_options("lenet5", Layout::NCHW);
  knobs::set_concurrency(options.knobs,
                         {2, 2, 1, true, 1});  // lanes 0,1 (replica 0) and 2,3 (replica 1)
  TrainingSession session(options);
  session.tracer().start();
  session.train_steps(3);
  session.tracer().stop();
  const profiler::Trace trace = session.tracer().collect({});
  std::set<std::pair<std::string, int>> where;  // kernel family ("gemm.fwd", "sgd"...), lane
  for (const auto& a : trace.activities) {
    const size_t second_dot = a.name.str().find('.', a.name.str().find('.') + 1);
    where.insert({a.name.str().substr(0, second_dot), a.stream});
  }
  for (int lane : {0, 2})
    EXPECT_TRUE(where.count({"gemm.fwd", lane})) << "forward on compute lane " << lane;
  for (int lane : {1, 3})
    EXPECT_TRUE(where.count({"gemm.bwd_filter", lane})) << "backward-filter on lane " << lane;
  for (int lane : {1, 3})
    EXPECT_FALSE(where.count({"gemm.bwd_data", lane})) << "backward-data stays on the compute lane";
  EXPECT_TRUE(where.count({"allreduce", 1}));
  EXPECT_TRUE(where.count({"broadcast", 1}));
  EXPECT_TRUE(where.count({"sgd", 1}));
  EXPECT_TRUE(where.count({"scatter", 0}) && where.count({"scatter", 2}));
  EXPECT_EQ(session.trainer().lane_count(), 4);
}

TEST(Concurrency, DivergingLossOnALaneIsReportedToTheCaller) {
  SessionOptions options = small_options("lenet5", Layout::NCHW);
  options.sgd.learning_rate = 1e6f;  // explodes within a few steps
  knobs::set_concurrency(options.knobs, {2, 1, 1, true, 0});
  TrainingSession session(options);
  try {
    session.train_steps(20);
    ADD_FAILURE() << "a learning rate of 1e6 did not diverge";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("training diverged"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunescope
