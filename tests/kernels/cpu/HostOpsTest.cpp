// The ops with one host implementation for every backend (core/base/OpKernelsOnHost.cpp),
// run through the CPU backend's ops in both layouts: leaky ReLU, sigmoid and tanh
// against their formulas (within 1e-6 relative: std::exp / std::tanh in float) and
// their backward passes against central differences (gradient_matches' tolerance);
// the scale; concatenation and its split on channel counts that are not multiples of
// a vector, checked value by value and as each other's inverse.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "CpuOpsTestSupport.h"
#include "core/base/Error.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuOps.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu::test_support {
namespace {

const Shape4 kHostShape{3, 5, 7, 9};

double formula(const ActivationParams& a, double x) {
  switch (a.kind) {
    case Activation::leaky_relu: return x < 0 ? a.alpha * x : x;
    case Activation::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Activation::tanh: return std::tanh(x);
  }
  return 0;
}

class HostOps : public ::testing::TestWithParam<Layout> {
 protected:
  Layout layout() const { return GetParam(); }
  ThreadPool pool{3};
  ExecContext ctx{pool};
  CpuOps ops;
};

TEST_P(HostOps, ActivationsMatchTheirFormulasAndFiniteDifferences) {
  for (const ActivationParams params :
       {ActivationParams{Activation::leaky_relu, 0.1f},
        ActivationParams{Activation::leaky_relu, 0.01f}, ActivationParams{Activation::sigmoid},
        ActivationParams{Activation::tanh}}) {
    SCOPED_TRACE(activation_name(params.kind));
    // Away from leaky ReLU's kink, so a step of 1e-2 never crosses it.
    Tensor x = away_from_zero_tensor(kHostShape, layout(), 31, 0.05f);
    for (int64_t i = 0; i < x.size(); ++i) x.data()[i] *= 3.0f;  // sigmoid/tanh beyond linear
    const Tensor dy = random_tensor(kHostShape, layout(), 32);
    Tensor y(kHostShape, layout());
    ops.activation_forward(ctx, params, x, y);
    for (int64_t i = 0; i < x.size(); ++i) {
      const double want = formula(params, x.data()[i]);
      ASSERT_NEAR(y.data()[i], want, 1e-6 * std::max(1.0, std::abs(want))) << "element " << i;
    }
    Tensor dx(kHostShape, layout());
    ops.activation_backward(ctx, params, x, y, dy, dx);
    Tensor scratch(kHostShape, layout());
    EXPECT_TRUE(gradient_matches(x, dx, [&] {
      ops.activation_forward(ctx, params, x, scratch);
      return dot(scratch, dy);
    }));
  }
}

TEST_P(HostOps, ActivationForwardMayWorkInPlace) {
  Tensor x = random_tensor(kHostShape, layout(), 33, -3.0f, 3.0f);
  Tensor y(kHostShape, layout());
  const ActivationParams params{Activation::tanh};
  ops.activation_forward(ctx, params, x, y);
  ops.activation_forward(ctx, params, x, x);
  EXPECT_TRUE(bitwise_equal(x, y));
}

TEST_P(HostOps, ScaleIsItsOwnGradient) {
  Tensor x = random_tensor(kHostShape, layout(), 34);
  const Tensor dy = random_tensor(kHostShape, layout(), 35);
  Tensor y(kHostShape, layout()), dx(kHostShape, layout());
  ops.scale(ctx, -0.75f, x, y);
  for (int64_t i = 0; i < x.size(); ++i) ASSERT_EQ(y.data()[i], -0.75f * x.data()[i]);
  ops.scale(ctx, -0.75f, dy, dx);
  EXPECT_TRUE(gradient_matches(x, dx, [&] {
    ops.scale(ctx, -0.75f, x, y);
    return dot(y, dy);
  }));
}

TEST_P(HostOps, ConcatPlacesEachPartsChannelsAndSplitInvertsIt) {
  const Tensor a = random_tensor({2, 3, 4, 5}, layout(), 36);
  const Tensor b = random_tensor({2, 1, 4, 5}, layout(), 37);
  const Tensor c = random_tensor({2, 9, 4, 5}, layout(), 38);
  Tensor y({2, 13, 4, 5}, layout());
  y.fill(std::nanf(""));
  const std::vector<const Tensor*> parts{&a, &b, &c};
  ops.concat_channels(ctx, parts, y);
  int64_t offset = 0;
  for (const Tensor* part : parts) {
    const Shape4 s = part->shape();
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t ch = 0; ch < s.c; ++ch)
        for (int64_t h = 0; h < s.h; ++h)
          for (int64_t w = 0; w < s.w; ++w)
            ASSERT_EQ(y.at(n, offset + ch, h, w), part->at(n, ch, h, w));
    offset += s.c;
  }
  Tensor da({2, 3, 4, 5}, layout()), db({2, 1, 4, 5}, layout()), dc({2, 9, 4, 5}, layout());
  const std::vector<Tensor*> grads{&da, &db, &dc};
  ops.split_channels(ctx, y, grads);  // the gradient of concat is the split
  EXPECT_TRUE(bitwise_equal(da, a));
  EXPECT_TRUE(bitwise_equal(db, b));
  EXPECT_TRUE(bitwise_equal(dc, c));
}

TEST_P(HostOps, ConcatRefusesPartsThatDoNotFit) {
  const Tensor a = random_tensor({2, 3, 4, 5}, layout(), 39);
  const Tensor other_size = random_tensor({2, 2, 4, 4}, layout(), 40);
  Tensor y({2, 5, 4, 5}, layout());
  const std::vector<const Tensor*> mismatched{&a, &other_size};
  EXPECT_THROW(ops.concat_channels(ctx, mismatched, y), Error);
  const std::vector<const Tensor*> too_few{&a};
  EXPECT_THROW(ops.concat_channels(ctx, too_few, y), Error);
}

// Names as OpKernels.h gives them, written out here on purpose; read after the ops
// returned, as the tracer keeps them as pointers (literals only).
TEST_P(HostOps, EachOpRecordsItsKernelName) {
  profiler::Tracer tracer;
  const ExecContext traced{pool, &tracer, /*device=*/0, /*lane=*/2};
  const Tensor x = random_tensor(kHostShape, layout(), 41);
  Tensor y(kHostShape, layout()), dx(kHostShape, layout()), both({3, 10, 7, 9}, layout());
  tracer.start();
  for (const Activation kind : {Activation::leaky_relu, Activation::sigmoid, Activation::tanh}) {
    ops.activation_forward(traced, {kind}, x, y);
    ops.activation_backward(traced, {kind}, x, y, x, dx);
  }
  ops.scale(traced, 2.0f, x, y);
  const std::vector<const Tensor*> parts{&x, &y};
  ops.concat_channels(traced, parts, both);
  const std::vector<Tensor*> grads{&dx, &y};
  ops.split_channels(traced, both, grads);
  tracer.stop();
  std::vector<std::string> names;
  for (const profiler::Activity& a : tracer.collect({}).activities) {
    names.emplace_back(a.name);
    EXPECT_EQ(a.stream, 2);  // the lane
  }
  EXPECT_EQ(names, (std::vector<std::string>{"leaky_relu.fwd", "leaky_relu.bwd", "sigmoid.fwd",
                                             "sigmoid.bwd", "tanh.fwd", "tanh.bwd", "scale",
                                             "concat", "concat.bwd"}));
}

INSTANTIATE_TEST_SUITE_P(BothLayouts, HostOps, ::testing::Values(Layout::NCHW, Layout::NHWC),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
}  // namespace tunescope::cpu::test_support
