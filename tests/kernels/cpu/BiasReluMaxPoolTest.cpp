// The fused conv bias + ReLU + max pool ("bias_relu_maxpool.fwd/.bwd") on every
// instruction-set path this CPU runs (TUNESCOPE_ELEMENTWISE_ISA forces each), in both
// layouts:
// - against the unfused ops in sequence (copy, bias.fwd, relu.fwd, maxpool.fwd; maxpool.bwd,
//   relu.bwd, bias.bwd): y and dx bit for bit (tolerance 0: the same max and routing), with
//   values on eight levels so that most windows hold ties and biases that add exactly, so
//   the first maximum must win as in the unfused ops; dbias to 1e-6 relative (the fused op
//   sums per output row in double, bias.bwd per channel run);
// - on shapes with channel counts below, at and above the vector widths, odd planes with
//   rows and columns past the last window, and a 3x3 stride-2 padded window, which is not
//   tiled and runs the default (the unfused ops); NCHW planes of 2 x 2 windows with rows of
//   at most 16 outputs run as one run of window rows across planes (several batches of
//   window rows, runs starting at any channel, rows of 16 outputs and of 17, which do not);
// - the backward against central differences of the forward (gradient_matches: relative
//   error <= 1e-2 at a step of 1e-2), with inputs 0.05 apart and every x + bias at least
//   0.025 from ReLU's kink, so no step changes a window's arg-max or crosses the kink.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "CpuOpsTestSupport.h"
#include "core/base/Error.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuIsa.h"
#include "kernels/cpu/CpuOps.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu::test_support {
namespace {

constexpr double kBiasTolerance = 1e-6;

// Per-channel biases k / 8 for small k: x + bias is exact on levels_tensor's levels.
Tensor bias_tensor(int64_t channels, Layout layout, float offset) {
  Tensor b({1, channels, 1, 1}, layout);
  for (int64_t c = 0; c < channels; ++c)
    b.at(0, c, 0, 0) = offset + 0.125f * static_cast<float>(c % 5 - 2);
  return b;
}

struct Result {
  Tensor y, dx, dbias;
};

struct PoolCase {
  Shape4 in;
  PoolParams p;
};

class BiasReluMaxPool : public ::testing::TestWithParam<Layout> {
 protected:
  Layout layout() const { return GetParam(); }

  Result fused(const PoolCase& pc, const Tensor& x, const Tensor& bias, const Tensor& dy) {
    Result r{Tensor(pc.p.output(pc.in), layout()), Tensor(pc.in, layout()), Tensor(bias)};
    r.y.fill(-7.0f);
    r.dx.fill(-7.0f);  // every element must be written, the uncovered ones with 0
    r.dbias.fill(-7.0f);
    ops.bias_relu_maxpool_forward(ctx, pc.p, x, bias, r.y);
    ops.bias_relu_maxpool_backward(ctx, pc.p, x, bias, r.y, dy, r.dx, r.dbias);
    return r;
  }

  Result unfused(const PoolCase& pc, const Tensor& x, const Tensor& bias, const Tensor& dy) {
    Result r{Tensor(pc.p.output(pc.in), layout()), Tensor(pc.in, layout()), Tensor(bias)};
    Tensor z(pc.in, layout()), g(pc.in, layout());
    ops.copy(ctx, x, z);
    ops.bias_forward(ctx, bias, z);
    ops.relu_forward(ctx, z, z);
    ops.maxpool_forward(ctx, pc.p, z, r.y);
    ops.maxpool_backward(ctx, pc.p, z, dy, g);
    ops.relu_backward(ctx, z, g, r.dx);
    ops.bias_backward(ctx, r.dx, r.dbias);
    return r;
  }

  ThreadPool pool{3};
  ExecContext ctx{pool};
  CpuOps ops;
};

const PoolParams kTiled2{};
const PoolParams kTiled3{.kernel_h = 3, .kernel_w = 3, .stride_h = 3, .stride_w = 3};
const PoolParams kOverlapping{
    .kernel_h = 3, .kernel_w = 3, .stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1};

TEST_P(BiasReluMaxPool, MatchesTheUnfusedOpsOnEveryPath) {
  const std::vector<PoolCase> cases = {
      {{3, 6, 28, 28}, kTiled2},  {{2, 16, 10, 10}, kTiled2},   {{2, 1, 9, 7}, kTiled2},
      {{1, 17, 11, 13}, kTiled2}, {{2, 40, 6, 6}, kTiled2},     {{2, 6, 9, 10}, kTiled3},
      {{2, 16, 7, 66}, kTiled2},  {{2, 5, 9, 9}, kOverlapping}, {{5, 7, 12, 8}, kTiled2},
      {{3, 3, 4, 32}, kTiled2},   {{2, 3, 4, 34}, kTiled2}};
  uint32_t seed = 21;
  for (const PoolCase& pc : cases)
    for (const float offset : {0.0f, -0.5f, 0.625f}) {
      const Tensor x = levels_tensor(pc.in, layout(), seed++);
      const Tensor bias = bias_tensor(pc.in.c, layout(), offset);
      const Tensor dy = random_tensor(pc.p.output(pc.in), layout(), seed++);
      const Result want = unfused(pc, x, bias, dy);
      for (CpuIsa isa : supported_cpu_isas()) {
        ForcedIsa forced(isa);
        SCOPED_TRACE(cat(to_string(isa), " ", pc.in.str(), " kernel ", pc.p.kernel_h, "x",
                         pc.p.kernel_w, " stride ", pc.p.stride_h, " bias offset ", offset));
        const Result got = fused(pc, x, bias, dy);
        EXPECT_TRUE(bitwise_equal(got.y, want.y)) << "y";
        EXPECT_TRUE(bitwise_equal(got.dx, want.dx)) << "dx";
        EXPECT_TRUE(logically_near(got.dbias, want.dbias, kBiasTolerance)) << "dbias";
      }
    }
}

TEST_P(BiasReluMaxPool, GradientsMatchCentralDifferencesOnEveryPath) {
  const PoolCase pc{{2, 6, 8, 10}, kTiled2};
  // Inputs k * 0.05 and biases (j + 1/2) * 0.05: every x + bias at least 0.025 from 0.
  Tensor x = distinct_tensor(pc.in, layout(), 5, 0.05f);
  Tensor bias({1, pc.in.c, 1, 1}, layout());
  for (int64_t c = 0; c < pc.in.c; ++c)
    bias.at(0, c, 0, 0) = 0.05f * (static_cast<float>(c % 3) - 1.0f + 0.5f);
  const Tensor w = random_tensor(pc.p.output(pc.in), layout(), 6);
  for (CpuIsa isa : supported_cpu_isas()) {
    ForcedIsa forced(isa);
    SCOPED_TRACE(to_string(isa));
    const Result r = fused(pc, x, bias, w);  // loss = sum(y * w): dy = w
    const auto loss = [&] {
      Tensor y(pc.p.output(pc.in), layout());
      ops.bias_relu_maxpool_forward(ctx, pc.p, x, bias, y);
      return dot(y, w);
    };
    EXPECT_TRUE(gradient_matches(x, r.dx, loss));
    EXPECT_TRUE(gradient_matches(bias, r.dbias, loss));
  }
}

TEST_P(BiasReluMaxPool, TracesOneNamedKernelEachWay) {
  const PoolCase pc{{2, 6, 28, 28}, kTiled2};
  const Tensor x = random_tensor(pc.in, layout(), 1);
  const Tensor bias = bias_tensor(pc.in.c, layout(), 0.0f);
  const Tensor dy = random_tensor(pc.p.output(pc.in), layout(), 2);
  Tensor y(pc.p.output(pc.in), layout()), dx(pc.in, layout()), db(bias);
  profiler::Tracer tracer;
  const ExecContext traced{pool, &tracer, /*device=*/0, /*lane=*/0};
  tracer.start();
  ops.bias_relu_maxpool_forward(traced, pc.p, x, bias, y);
  ops.bias_relu_maxpool_backward(traced, pc.p, x, bias, y, dy, dx, db);
  tracer.stop();
  std::vector<std::string> names;
  for (const profiler::Activity& a : tracer.collect({}).activities) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"bias_relu_maxpool.fwd", "bias_relu_maxpool.bwd"}));
}

TEST_P(BiasReluMaxPool, RefusesABiasOfTheWrongChannelCount) {
  const PoolCase pc{{2, 6, 8, 8}, kTiled2};
  const Tensor x = random_tensor(pc.in, layout(), 1);
  const Tensor bias = bias_tensor(5, layout(), 0.0f);
  Tensor y(pc.p.output(pc.in), layout());
  EXPECT_THROW(ops.bias_relu_maxpool_forward(ctx, pc.p, x, bias, y), Error);
}

INSTANTIATE_TEST_SUITE_P(Layouts, BiasReluMaxPool, ::testing::Values(Layout::NCHW, Layout::NHWC),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace tunescope::cpu::test_support
