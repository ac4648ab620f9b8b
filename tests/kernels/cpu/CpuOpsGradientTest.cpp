// Finite-difference checks of every CPU op with a backward pass, in both layouts, on
// odd shapes: each backward must match central differences of a scalar loss of its
// forward (see gradient_matches for the tolerance).
#include <gtest/gtest.h>

#include <vector>

#include "CpuOpsTestSupport.h"
#include "core/base/Error.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuOps.h"

namespace tunescope::cpu::test_support {
namespace {

const Shape4 kGradientShape{3, 5, 7, 9};
const Shape4 kChannelParam{1, kGradientShape.c, 1, 1};

class CpuOpsGradient : public ::testing::TestWithParam<Layout> {
 protected:
  Layout layout() const { return GetParam(); }
  ThreadPool pool{3};
  ExecContext ctx{pool};
  CpuOps ops;
};

TEST_P(CpuOpsGradient, BatchNorm) {
  Tensor x = random_tensor(kGradientShape, layout(), 1, -2.0f, 3.0f);
  Tensor gamma = random_tensor(kChannelParam, layout(), 2, 0.5f, 1.5f);
  Tensor beta = random_tensor(kChannelParam, layout(), 3);
  const Tensor dy = random_tensor(kGradientShape, layout(), 4);
  auto forward = [&](BatchNormSaved& saved) {
    Tensor running_mean(kChannelParam, layout()), running_var(kChannelParam, layout());
    Tensor y(kGradientShape, layout());
    ops.batchnorm_forward_train(ctx, {}, x, gamma, beta, running_mean, running_var, saved, y);
    return y;
  };
  auto loss = [&] {
    BatchNormSaved saved;
    return dot(forward(saved), dy);
  };
  BatchNormSaved saved;
  forward(saved);
  Tensor dx(kGradientShape, layout()), dgamma(kChannelParam, layout()),
      dbeta(kChannelParam, layout());
  ops.batchnorm_backward(ctx, x, dy, gamma, saved, dx, dgamma, dbeta);
  EXPECT_TRUE(gradient_matches(x, dx, loss));
  EXPECT_TRUE(gradient_matches(gamma, dgamma, loss));
  EXPECT_TRUE(gradient_matches(beta, dbeta, loss));
}

TEST_P(CpuOpsGradient, Relu) {
  Tensor x = away_from_zero_tensor(kGradientShape, layout(), 5, 0.1f);
  const Tensor dy = random_tensor(kGradientShape, layout(), 6);
  Tensor y(kGradientShape, layout());
  auto loss = [&] {
    ops.relu_forward(ctx, x, y);
    return dot(y, dy);
  };
  ops.relu_forward(ctx, x, y);
  Tensor dx(kGradientShape, layout());
  ops.relu_backward(ctx, y, dy, dx);
  EXPECT_TRUE(gradient_matches(x, dx, loss));
}

// Square and non-square kernels, strides 1 and 2 (overlapping windows), with and
// without padding; 7x9 does not divide evenly by any of them.
std::vector<PoolParams> pool_cases() {
  return {
      PoolParams{},                                                      // 2x2 s2
      PoolParams{.kernel_h = 3, .kernel_w = 3, .pad_h = 1, .pad_w = 1},  // 3x3 s2 p1
      PoolParams{
          .kernel_h = 3, .kernel_w = 3, .stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1},
      PoolParams{
          .kernel_h = 3, .kernel_w = 2, .stride_h = 2, .stride_w = 1, .pad_h = 1, .pad_w = 0},
  };
}

std::string describe(const PoolParams& p) {
  return cat("kernel ", p.kernel_h, "x", p.kernel_w, " stride ", p.stride_h, "x", p.stride_w,
             " pad ", p.pad_h, "x", p.pad_w);
}

TEST_P(CpuOpsGradient, MaxPool) {
  for (const PoolParams& p : pool_cases()) {
    SCOPED_TRACE(describe(p));
    const Shape4 out = p.output(kGradientShape);
    Tensor x = distinct_tensor(kGradientShape, layout(), 7, 0.05f);
    const Tensor dy = random_tensor(out, layout(), 8);
    Tensor y(out, layout());
    auto loss = [&] {
      ops.maxpool_forward(ctx, p, x, y);
      return dot(y, dy);
    };
    Tensor dx(kGradientShape, layout());
    ops.maxpool_backward(ctx, p, x, dy, dx);
    EXPECT_TRUE(gradient_matches(x, dx, loss));
  }
}

TEST_P(CpuOpsGradient, AvgPool) {
  for (const PoolParams& p : pool_cases()) {
    SCOPED_TRACE(describe(p));
    const Shape4 out = p.output(kGradientShape);
    Tensor x = random_tensor(kGradientShape, layout(), 9);
    const Tensor dy = random_tensor(out, layout(), 10);
    Tensor y(out, layout());
    auto loss = [&] {
      ops.avgpool_forward(ctx, p, x, y);
      return dot(y, dy);
    };
    Tensor dx(kGradientShape, layout());
    ops.avgpool_backward(ctx, p, dy, dx);
    EXPECT_TRUE(gradient_matches(x, dx, loss));
  }
}

TEST_P(CpuOpsGradient, GlobalAvgPool) {
  const Shape4 out{kGradientShape.n, kGradientShape.c, 1, 1};
  Tensor x = random_tensor(kGradientShape, layout(), 11);
  const Tensor dy = random_tensor(out, layout(), 12);
  Tensor y(out, layout());
  auto loss = [&] {
    ops.global_avgpool_forward(ctx, x, y);
    return dot(y, dy);
  };
  Tensor dx(kGradientShape, layout());
  ops.global_avgpool_backward(ctx, dy, dx);
  EXPECT_TRUE(gradient_matches(x, dx, loss));
}

TEST_P(CpuOpsGradient, FullyConnected) {
  const int64_t outputs = 4;
  const Shape4 weight_shape{outputs, kGradientShape.c, kGradientShape.h, kGradientShape.w};
  const Shape4 out{kGradientShape.n, outputs, 1, 1};
  Tensor x = random_tensor(kGradientShape, layout(), 13);
  Tensor weight = random_tensor(weight_shape, layout(), 14, -0.2f, 0.2f);
  Tensor bias = random_tensor({1, outputs, 1, 1}, layout(), 15);
  const Tensor dy = random_tensor(out, layout(), 16);
  Tensor y(out, layout());
  auto loss = [&] {
    ops.fc_forward(ctx, x, weight, bias, y);
    return dot(y, dy);
  };
  Tensor dx(kGradientShape, layout()), dweight(weight_shape, layout()),
      dbias({1, outputs, 1, 1}, layout());
  ops.fc_backward_data(ctx, dy, weight, dx);
  ops.fc_backward_weight(ctx, x, dy, dweight, dbias);
  EXPECT_TRUE(gradient_matches(x, dx, loss));
  EXPECT_TRUE(gradient_matches(weight, dweight, loss));
  EXPECT_TRUE(gradient_matches(bias, dbias, loss));
}

TEST_P(CpuOpsGradient, Bias) {
  const Tensor y0 = random_tensor(kGradientShape, layout(), 17);
  Tensor bias = random_tensor(kChannelParam, layout(), 18);
  const Tensor dy = random_tensor(kGradientShape, layout(), 19);
  auto loss = [&] {
    Tensor y = y0;
    ops.bias_forward(ctx, bias, y);
    return dot(y, dy);
  };
  Tensor dbias(kChannelParam, layout());
  ops.bias_backward(ctx, dy, dbias);
  EXPECT_TRUE(gradient_matches(bias, dbias, loss));
}

// add has no backward op: the engine hands dy to both inputs unchanged (copy or
// accumulate). This checks that dy is the gradient with respect to each input.
TEST_P(CpuOpsGradient, AddPassesGradientToBothInputs) {
  Tensor a = random_tensor(kGradientShape, layout(), 20);
  Tensor b = random_tensor(kGradientShape, layout(), 21);
  const Tensor dy = random_tensor(kGradientShape, layout(), 22);
  Tensor y(kGradientShape, layout());
  auto loss = [&] {
    ops.add(ctx, a, b, y);
    return dot(y, dy);
  };
  EXPECT_TRUE(gradient_matches(a, dy, loss));
  EXPECT_TRUE(gradient_matches(b, dy, loss));
}

TEST_P(CpuOpsGradient, SoftmaxCrossEntropy) {
  const Shape4 shape{5, 7, 1, 1};
  Tensor logits = random_tensor(shape, layout(), 23, -3.0f, 3.0f);
  const std::vector<int32_t> labels{0, 6, 3, 3, 1};
  auto loss = [&] {
    return static_cast<double>(ops.softmax_cross_entropy(ctx, logits, labels, nullptr, nullptr));
  };
  Tensor dlogits(shape, layout());
  ops.softmax_cross_entropy(ctx, logits, labels, &dlogits, nullptr);
  EXPECT_TRUE(gradient_matches(logits, dlogits, loss));
}

INSTANTIATE_TEST_SUITE_P(Layouts, CpuOpsGradient, ::testing::Values(Layout::NCHW, Layout::NHWC),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
}  // namespace tunescope::cpu::test_support
