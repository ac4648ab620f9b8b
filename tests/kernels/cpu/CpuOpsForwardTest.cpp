// CPU op kernels against hand-computed results, in both layouts: pooling windows and
// padding, batch-norm statistics and running averages, the softmax loss, SGD steps, the
// FC flattening order and the small elementwise ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "CpuOpsTestSupport.h"
#include "core/base/Error.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuOps.h"

namespace tunescope::cpu::test_support {
namespace {

constexpr double kTol = 1e-6;

class CpuOpsForward : public ::testing::TestWithParam<Layout> {
 protected:
  Layout layout() const { return GetParam(); }
  Tensor make(const Shape4& shape, std::initializer_list<float> values) const {
    return tensor_of(shape, layout(), values);
  }
  ThreadPool pool{3};
  ExecContext ctx{pool};
  CpuOps ops;
};

// Channel 0 holds 0..15 row by row; channel 1 holds -1..-16, so padding (never a
// candidate) would win every window of channel 1 if it counted as 0.
Tensor pool_input(Layout layout) {
  Tensor x({1, 2, 4, 4}, layout);
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t w = 0; w < 4; ++w) {
      x.at(0, 0, h, w) = static_cast<float>(h * 4 + w);
      x.at(0, 1, h, w) = -static_cast<float>(h * 4 + w) - 1.0f;
    }
  return x;
}

TEST_P(CpuOpsForward, MaxPoolTwoByTwo) {
  Tensor y({1, 2, 2, 2}, layout());
  ops.maxpool_forward(ctx, PoolParams{}, pool_input(layout()), y);
  EXPECT_TRUE(logically_near(y, make({1, 2, 2, 2}, {5, 7, 13, 15, -1, -3, -9, -11}), kTol));
}

TEST_P(CpuOpsForward, MaxPoolPaddingNeverWins) {
  const PoolParams p{.kernel_h = 3, .kernel_w = 3, .pad_h = 1, .pad_w = 1};
  Tensor y({1, 2, 2, 2}, layout());
  ops.maxpool_forward(ctx, p, pool_input(layout()), y);
  EXPECT_TRUE(logically_near(y, make({1, 2, 2, 2}, {5, 7, 13, 15, -1, -2, -5, -6}), kTol));
}

TEST_P(CpuOpsForward, MaxPoolBackwardFirstMaximumWinsTies) {
  const Tensor x = make({1, 1, 2, 2}, {0.5f, 0.5f, 0.5f, 0.5f});
  Tensor dx({1, 1, 2, 2}, layout());
  ops.maxpool_backward(ctx, PoolParams{}, x, make({1, 1, 1, 1}, {3.0f}), dx);
  EXPECT_TRUE(logically_near(dx, make({1, 1, 2, 2}, {3, 0, 0, 0}), kTol));
}

TEST_P(CpuOpsForward, MaxPoolBackwardAccumulatesOverlappingWindows) {
  // Every 2x2 window of stride 1 has the centre as its maximum.
  const Tensor x = make({1, 1, 3, 3}, {0, 1, 0, 1, 9, 1, 0, 1, 0});
  const PoolParams p{.stride_h = 1, .stride_w = 1};
  Tensor dx({1, 1, 3, 3}, layout());
  ops.maxpool_backward(ctx, p, x, make({1, 1, 2, 2}, {1, 2, 3, 4}), dx);
  EXPECT_TRUE(logically_near(dx, make({1, 1, 3, 3}, {0, 0, 0, 0, 10, 0, 0, 0, 0}), kTol));
}

TEST_P(CpuOpsForward, AvgPoolCountsPaddingAsZero) {
  const PoolParams p{.kernel_h = 3, .kernel_w = 3, .pad_h = 1, .pad_w = 1};
  const Tensor x = make({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor y({1, 1, 2, 2}, layout());
  ops.avgpool_forward(ctx, p, x, y);
  EXPECT_TRUE(
      logically_near(y, make({1, 1, 2, 2}, {12.0f / 9, 16.0f / 9, 24.0f / 9, 28.0f / 9}), kTol));

  // Each input receives 1/9 per window covering it: corners 1, edges 2, centre 4.
  Tensor dx({1, 1, 3, 3}, layout());
  ops.avgpool_backward(ctx, p, make({1, 1, 2, 2}, {1, 1, 1, 1}), dx);
  EXPECT_TRUE(logically_near(dx,
                             make({1, 1, 3, 3}, {1.0f / 9, 2.0f / 9, 1.0f / 9, 2.0f / 9, 4.0f / 9,
                                                 2.0f / 9, 1.0f / 9, 2.0f / 9, 1.0f / 9}),
                             kTol));
}

TEST_P(CpuOpsForward, GlobalAvgPool) {
  const Tensor x = make({2, 2, 1, 3}, {1, 2, 3, -3, 0, 6, 4, 4, 4, 0, 0, 0.5f});
  Tensor y({2, 2, 1, 1}, layout());
  ops.global_avgpool_forward(ctx, x, y);
  EXPECT_TRUE(logically_near(y, make({2, 2, 1, 1}, {2, 1, 4, 0.5f / 3}), kTol));

  Tensor dx({2, 2, 1, 3}, layout());
  ops.global_avgpool_backward(ctx, make({2, 2, 1, 1}, {3, -6, 0, 1.5f}), dx);
  EXPECT_TRUE(logically_near(
      dx, make({2, 2, 1, 3}, {1, 1, 1, -2, -2, -2, 0, 0, 0, 0.5f, 0.5f, 0.5f}), kTol));
}

// Channel 0 holds {1, 2, 3, 4}: mean 2.5, biased variance 1.25, unbiased 5/3.
// Channel 1 holds {-1, 1, -1, 1}: mean 0, biased variance 1, unbiased 4/3.
TEST_P(CpuOpsForward, BatchNormTrainStatisticsAndRunningAverages) {
  const Shape4 shape{2, 2, 1, 2}, param{1, 2, 1, 1};
  const Tensor x = make(shape, {1, 2, -1, 1, 3, 4, -1, 1});
  const Tensor gamma = make(param, {2, 1}), beta = make(param, {0.5f, -1});
  Tensor running_mean = make(param, {0, 1}), running_var = make(param, {1, 1});
  BatchNormSaved saved;
  Tensor y(shape, layout());
  const BatchNormParams params{.momentum = 0.1f, .epsilon = 1e-5f};
  ops.batchnorm_forward_train(ctx, params, x, gamma, beta, running_mean, running_var, saved, y);

  const float inv0 = 1.0f / std::sqrt(1.25f + 1e-5f), inv1 = 1.0f / std::sqrt(1.0f + 1e-5f);
  EXPECT_TRUE(logically_near(saved.mean, make(param, {2.5f, 0}), kTol));
  EXPECT_TRUE(logically_near(saved.inv_std, make(param, {inv0, inv1}), kTol));
  EXPECT_TRUE(logically_near(running_mean, make(param, {0.25f, 0.9f}), kTol));
  EXPECT_TRUE(
      logically_near(running_var, make(param, {0.9f + 0.1f * 5 / 3, 0.9f + 0.1f * 4 / 3}), kTol));
  auto y0 = [&](float v) { return 2 * (v - 2.5f) * inv0 + 0.5f; };
  auto y1 = [&](float v) { return v * inv1 - 1; };
  EXPECT_TRUE(logically_near(
      y, make(shape, {y0(1), y0(2), y1(-1), y1(1), y0(3), y0(4), y1(-1), y1(1)}), kTol));
}

TEST_P(CpuOpsForward, BatchNormInferUsesRunningStatistics) {
  const Shape4 shape{1, 2, 1, 2}, param{1, 2, 1, 1};
  const Tensor x = make(shape, {1, 3, 0, 1});
  Tensor y(shape, layout());
  ops.batchnorm_forward_infer(ctx, BatchNormParams{.epsilon = 0}, x, make(param, {2, 1}),
                              make(param, {0.5f, -1}), make(param, {1, -1}),
                              make(param, {4, 0.25f}), y);
  // c0: 2 * (x - 1) / 2 + 0.5; c1: (x + 1) / 0.5 - 1.
  EXPECT_TRUE(logically_near(y, make(shape, {0.5f, 2.5f, 1, 3}), kTol));
}

TEST_P(CpuOpsForward, SoftmaxCrossEntropyValueGradientAndAccuracy) {
  const Shape4 shape{2, 3, 1, 1};
  // Row 0: uniform, label 2, loss ln 3, arg-max 0 (first of the ties): wrong.
  // Row 1: probabilities (3/5, 1/5, 1/5), label 0, loss ln(5/3): right.
  const Tensor logits = make(shape, {0, 0, 0, std::log(3.0f), 0, 0});
  const std::vector<int32_t> labels{2, 0};
  Tensor dlogits(shape, layout());
  int64_t correct = -1;
  const float loss = ops.softmax_cross_entropy(ctx, logits, labels, &dlogits, &correct);
  EXPECT_NEAR(loss, std::log(5.0) / 2, 1e-6);
  EXPECT_EQ(correct, 1);
  const float third = 1.0f / 3;
  EXPECT_TRUE(logically_near(
      dlogits, make(shape, {third / 2, third / 2, (third - 1) / 2, -0.2f, 0.1f, 0.1f}), kTol));
}

TEST_P(CpuOpsForward, SoftmaxCrossEntropyIsStableForHugeLogits) {
  const Shape4 shape{2, 3, 1, 1};
  const Tensor logits = make(shape, {1000, 0, -1000, -1000, 0, 1000});
  Tensor dlogits(shape, layout());
  const float loss =
      ops.softmax_cross_entropy(ctx, logits, std::vector<int32_t>{0, 0}, &dlogits, nullptr);
  // Row 0 is certain and right (loss 0), row 1 certain and wrong by 2000.
  EXPECT_NEAR(loss, 1000.0f, 1e-3);
  EXPECT_TRUE(logically_near(dlogits, make(shape, {0, 0, 0, -0.5f, 0, 0.5f}), kTol));
}

TEST_P(CpuOpsForward, SgdMomentumAndWeightDecayStepByStep) {
  const Shape4 shape{1, 2, 1, 1};
  Tensor weight = make(shape, {1, -2});
  const Tensor grad = make(shape, {0.5f, 0.25f});
  Tensor velocity(shape, layout());
  const SgdParams params{.learning_rate = 0.1f, .momentum = 0.9f, .weight_decay = 0.01f};
  // v1 = g + 0.01 w0 = (0.51, 0.23); w1 = w0 - 0.1 v1.
  ops.sgd_update(ctx, params, weight, grad, velocity);
  EXPECT_TRUE(logically_near(velocity, make(shape, {0.51f, 0.23f}), kTol));
  EXPECT_TRUE(logically_near(weight, make(shape, {0.949f, -2.023f}), kTol));
  // v2 = 0.9 v1 + g + 0.01 w1 = (0.96849, 0.43677); w2 = w1 - 0.1 v2.
  ops.sgd_update(ctx, params, weight, grad, velocity);
  EXPECT_TRUE(logically_near(velocity, make(shape, {0.96849f, 0.43677f}), kTol));
  EXPECT_TRUE(logically_near(weight, make(shape, {0.852151f, -2.066677f}), kTol));
}

// Two items of 2 channels x 2 columns: the flattening order differs between layouts,
// the weight follows it, and the layer computes the same thing.
TEST_P(CpuOpsForward, FullyConnectedAllThreePasses) {
  const Shape4 x_shape{2, 2, 1, 2}, w_shape{2, 2, 1, 2}, out{2, 2, 1, 1}, param{1, 2, 1, 1};
  const Tensor x = make(x_shape, {1, 2, 3, 4, 0, 1, 1, 0});
  const Tensor weight = make(w_shape, {1, 0, 0, 1, 1, 1, -1, -1});
  Tensor y(out, layout());
  ops.fc_forward(ctx, x, weight, make(param, {0.5f, 1}), y);
  EXPECT_TRUE(logically_near(y, make(out, {5.5f, -3, 0.5f, 1}), kTol));

  const Tensor dy = make(out, {1, 2, -1, 1});
  Tensor dx(x_shape, layout());
  ops.fc_backward_data(ctx, dy, weight, dx);
  EXPECT_TRUE(logically_near(dx, make(x_shape, {3, 2, -2, -1, 0, 1, -1, -2}), kTol));

  Tensor dweight(w_shape, layout()), dbias(param, layout());
  ops.fc_backward_weight(ctx, x, dy, dweight, dbias);
  EXPECT_TRUE(logically_near(dweight, make(w_shape, {1, 1, 2, 4, 2, 5, 7, 8}), kTol));
  EXPECT_TRUE(logically_near(dbias, make(param, {0, 3}), kTol));
}

// LeNet-5's fc1 (16 x 5 x 5 -> 120) on 37 items, which sgemm runs in several panels of
// rows, against a double-precision reference of x * weight^T + bias: relative error at
// most 1e-5 of the largest output (float sums of 400 products).
TEST_P(CpuOpsForward, FullyConnectedForwardMatchesDoubleReference) {
  const Shape4 x_shape{37, 16, 5, 5}, w_shape{120, 16, 5, 5}, out{37, 120, 1, 1};
  const Tensor x = random_tensor(x_shape, layout(), 71);
  const Tensor weight = random_tensor(w_shape, layout(), 72);
  const Tensor bias = random_tensor({1, 120, 1, 1}, layout(), 73);
  Tensor y(out, layout());
  ops.fc_forward(ctx, x, weight, bias, y);
  double worst = 0.0, largest = 0.0;
  for (int64_t n = 0; n < 37; ++n)
    for (int64_t o = 0; o < 120; ++o) {
      double want = bias.at(0, o, 0, 0);
      for (int64_t c = 0; c < 16; ++c)
        for (int64_t h = 0; h < 5; ++h)
          for (int64_t w = 0; w < 5; ++w)
            want += static_cast<double>(x.at(n, c, h, w)) * weight.at(o, c, h, w);
      worst = std::max(worst, std::abs(want - y.at(n, o, 0, 0)));
      largest = std::max(largest, std::abs(want));
    }
  EXPECT_LE(worst, 1e-5 * largest);
}

TEST_P(CpuOpsForward, BiasForwardAndBackward) {
  const Shape4 shape{2, 2, 1, 2}, param{1, 2, 1, 1};
  Tensor y = make(shape, {0, 1, 2, 3, 4, 5, 6, 7});
  ops.bias_forward(ctx, make(param, {10, -10}), y);
  EXPECT_TRUE(logically_near(y, make(shape, {10, 11, -8, -7, 14, 15, -4, -3}), kTol));
  Tensor dbias(param, layout());
  ops.bias_backward(ctx, make(shape, {0, 1, 2, 3, 4, 5, 6, 7}), dbias);
  EXPECT_TRUE(logically_near(dbias, make(param, {10, 18}), kTol));
}

TEST_P(CpuOpsForward, ReluForwardAndBackward) {
  const Shape4 shape{1, 2, 1, 2};
  Tensor y = make(shape, {-1, 2, 0, -0.5f});
  ops.relu_forward(ctx, y, y);  // in place
  EXPECT_TRUE(logically_near(y, make(shape, {0, 2, 0, 0}), kTol));
  Tensor g = make(shape, {5, 6, 7, 8});
  ops.relu_backward(ctx, y, g, g);  // in place
  EXPECT_TRUE(logically_near(g, make(shape, {0, 6, 0, 0}), kTol));
}

TEST_P(CpuOpsForward, AddAccumulateCopyZero) {
  const Shape4 shape{1, 2, 1, 2};
  Tensor a = make(shape, {1, 2, 3, 4});
  const Tensor b = make(shape, {10, 20, 30, 40});
  ops.add(ctx, a, b, a);  // y aliasing a
  EXPECT_TRUE(logically_near(a, make(shape, {11, 22, 33, 44}), kTol));
  ops.accumulate(ctx, b, a);
  EXPECT_TRUE(logically_near(a, make(shape, {21, 42, 63, 84}), kTol));
  Tensor c(shape, layout());
  ops.copy(ctx, b, c);
  EXPECT_TRUE(logically_near(c, b, 0));
  ops.zero(ctx, a);
  EXPECT_TRUE(logically_near(a, make(shape, {0, 0, 0, 0}), 0));
}

TEST_P(CpuOpsForward, TransposeKeepsLogicalValues) {
  const Layout other = layout() == Layout::NCHW ? Layout::NHWC : Layout::NCHW;
  const Tensor x = random_tensor({2, 3, 4, 5}, layout(), 1);
  Tensor y({2, 3, 4, 5}, other);
  ops.transpose(ctx, x, y);
  EXPECT_TRUE(logically_near(y, x, 0));
  Tensor back({2, 3, 4, 5}, layout());
  ops.transpose(ctx, y, back);
  EXPECT_TRUE(bitwise_equal(back, x));
}

TEST_P(CpuOpsForward, ScatterPadsAPartialShard) {
  const Tensor batch = make({3, 2, 1, 1}, {1, 2, 3, 4, 5, 6});
  Tensor shard({2, 2, 1, 1}, layout());
  shard.fill(9.0f);
  ops.scatter_rows(ctx, batch, 1, shard);  // rows 1..2: a full shard
  EXPECT_TRUE(logically_near(shard, make({2, 2, 1, 1}, {3, 4, 5, 6}), 0));
  ops.scatter_rows(ctx, batch, 2, shard);  // one row left: the second is zeroed
  EXPECT_TRUE(logically_near(shard, make({2, 2, 1, 1}, {5, 6, 0, 0}), 0));
  EXPECT_THROW(ops.scatter_rows(ctx, batch, 3, shard), Error);
}

TEST_P(CpuOpsForward, AllreduceAndBroadcast) {
  const Shape4 shape{1, 2, 1, 2};
  Tensor a = make(shape, {1, 2, 3, 4});
  const Tensor b = make(shape, {10, 20, 30, 40});
  const std::vector<const Tensor*> sources{&a, &b};
  ops.allreduce_sum(ctx, sources, 0.5f, a);  // out may be a source
  EXPECT_TRUE(logically_near(a, make(shape, {5.5f, 11, 16.5f, 22}), kTol));
  Tensor c(shape, layout()), d(shape, layout());
  const std::vector<Tensor*> targets{&c, &d};
  ops.broadcast(ctx, b, targets);
  EXPECT_TRUE(logically_near(c, b, 0));
  EXPECT_TRUE(logically_near(d, b, 0));
}

INSTANTIATE_TEST_SUITE_P(Layouts, CpuOpsForward, ::testing::Values(Layout::NCHW, Layout::NHWC),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
}  // namespace tunescope::cpu::test_support
