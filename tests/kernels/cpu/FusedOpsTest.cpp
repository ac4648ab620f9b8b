// The fused batch-norm + (residual add +) ReLU ops and the vectorised elementwise kernels,
// on every instruction-set path this CPU runs (TUNESCOPE_ELEMENTWISE_ISA forces each), in
// both layouts:
// - fused forward and backward against the unfused ops in sequence (bn.fwd, add,
//   relu.fwd; relu.bwd, bn.bwd): the same float operations in the same order, so they
//   agree to 1e-6 relative (bit-identical in practice);
// - the fused backward against central differences of its forward (gradient_matches:
//   relative error <= 1e-2 at a step of 1e-2, with every pre-activation kept at least
//   0.05 from ReLU's kink, farther than a step moves it);
// - each vector path against the scalar one: 1e-5 relative (FMA contraction and the
//   lane order of the double sums differ).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "CpuOpsTestSupport.h"
#include "core/base/Error.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuIsa.h"
#include "kernels/cpu/CpuOps.h"
#include "kernels/cpu/ElementwiseIsa.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu::test_support {
namespace {

constexpr double kFusedTolerance = 1e-6;
constexpr double kIsaTolerance = 1e-5;

struct FusedCase {
  Layout layout;
  bool residual;
};

std::string case_name(const ::testing::TestParamInfo<FusedCase>& info) {
  return cat(to_string(info.param.layout), info.param.residual ? "_residual" : "_plain");
}

// Everything one forward + backward of the op produces.
struct Outputs {
  Tensor y, mean, inv_std, running_mean, running_var, dx, dgamma, dbeta, dresidual;
};

class FusedOps : public ::testing::TestWithParam<FusedCase> {
 protected:
  Layout layout() const { return GetParam().layout; }
  bool residual() const { return GetParam().residual; }

  // The fused ops, or the unfused ones in sequence.
  Outputs run(bool fused, const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& r,
              const Tensor& dy) {
    const Shape4 s = x.shape(), ch{1, s.c, 1, 1};
    Outputs o{Tensor(s, layout()),  Tensor(ch, layout()), Tensor(ch, layout()),
              Tensor(ch, layout()), Tensor(ch, layout()), Tensor(s, layout()),
              Tensor(ch, layout()), Tensor(ch, layout()), Tensor(s, layout())};
    o.running_var.fill(1.0f);
    BatchNormSaved saved{o.mean, o.inv_std};
    const Tensor* rp = residual() ? &r : nullptr;
    Tensor* drp = residual() ? &o.dresidual : nullptr;
    if (fused) {
      ops.batchnorm_relu_forward_train(ctx, {}, x, gamma, beta, rp, o.running_mean, o.running_var,
                                       saved, o.y);
      ops.batchnorm_relu_backward(ctx, x, o.y, dy, gamma, saved, o.dx, o.dgamma, o.dbeta, drp);
    } else {
      ops.batchnorm_forward_train(ctx, {}, x, gamma, beta, o.running_mean, o.running_var, saved,
                                  o.y);
      if (rp) ops.add(ctx, o.y, *rp, o.y);
      ops.relu_forward(ctx, o.y, o.y);
      Tensor g(s, layout());
      ops.relu_backward(ctx, o.y, dy, g);
      if (drp) ops.copy(ctx, g, *drp);
      ops.batchnorm_backward(ctx, x, g, gamma, saved, o.dx, o.dgamma, o.dbeta);
    }
    o.mean = saved.mean;
    o.inv_std = saved.inv_std;
    return o;
  }

  static void expect_near(const Outputs& a, const Outputs& b, double tol, bool residual) {
    EXPECT_TRUE(logically_near(a.y, b.y, tol)) << "y";
    EXPECT_TRUE(logically_near(a.mean, b.mean, tol)) << "saved mean";
    EXPECT_TRUE(logically_near(a.inv_std, b.inv_std, tol)) << "saved inv_std";
    EXPECT_TRUE(logically_near(a.running_mean, b.running_mean, tol)) << "running mean";
    EXPECT_TRUE(logically_near(a.running_var, b.running_var, tol)) << "running var";
    EXPECT_TRUE(logically_near(a.dx, b.dx, tol)) << "dx";
    EXPECT_TRUE(logically_near(a.dgamma, b.dgamma, tol)) << "dgamma";
    EXPECT_TRUE(logically_near(a.dbeta, b.dbeta, tol)) << "dbeta";
    if (residual) {
      EXPECT_TRUE(logically_near(a.dresidual, b.dresidual, tol)) << "dresidual";
    }
  }

  ThreadPool pool{3};
  ExecContext ctx{pool};
  CpuOps ops;
};

// Large enough to split over the pool; 20 channels and 13x11 planes leave a tail after
// every vector width.
const Shape4 kLarge{8, 20, 13, 11};

TEST_P(FusedOps, MatchesUnfusedOpsOnEveryPath) {
  const Shape4 ch{1, kLarge.c, 1, 1};
  const Tensor x = random_tensor(kLarge, layout(), 1, -2.0f, 3.0f);
  const Tensor gamma = random_tensor(ch, layout(), 2, 0.5f, 1.5f);
  const Tensor beta = random_tensor(ch, layout(), 3);
  const Tensor r = random_tensor(kLarge, layout(), 4);
  const Tensor dy = random_tensor(kLarge, layout(), 5);
  Outputs scalar_path;
  for (CpuIsa isa : supported_cpu_isas()) {
    SCOPED_TRACE(to_string(isa));
    ForcedIsa forced(isa);
    const Outputs fused = run(true, x, gamma, beta, r, dy);
    expect_near(fused, run(false, x, gamma, beta, r, dy), kFusedTolerance, residual());
    if (isa == CpuIsa::scalar)
      scalar_path = fused;
    else
      expect_near(fused, scalar_path, kIsaTolerance, residual());
  }
}

// Per channel, values of magnitude in [0.1, 1] in pairs +v, -v: the batch mean is 0 up to
// rounding, so with beta = 0 no normalised value comes within 0.1 / std of ReLU's kink.
Tensor symmetric_tensor(const Shape4& s, Layout layout, uint32_t seed) {
  Tensor t(s, layout);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> magnitude(0.1f, 1.0f);
  std::bernoulli_distribution negative(0.5);
  const int64_t plane = s.h * s.w, half = s.n * plane / 2;
  for (int64_t c = 0; c < s.c; ++c)
    for (int64_t p = 0; p < half; ++p) {
      const float v = negative(rng) ? -magnitude(rng) : magnitude(rng);
      const int64_t q = p + half;
      t.at(p / plane, c, p % plane / s.w, p % s.w) = v;
      t.at(q / plane, c, q % plane / s.w, q % s.w) = -v;
    }
  return t;
}

TEST_P(FusedOps, BackwardMatchesFiniteDifferencesOnEveryPath) {
  const Shape4 s{4, 10, 3,
                 6};  // NHWC rows of 10 and NCHW planes of 18: a tail after 8 and 16 lanes
  const Shape4 ch{1, s.c, 1, 1};
  Tensor x = symmetric_tensor(s, layout(), 6);
  Tensor gamma = random_tensor(ch, layout(), 7, 0.5f, 1.5f);
  Tensor beta(ch, layout());  // 0: the kink stays at the (zero) mean
  Tensor r = random_tensor(s, layout(), 8);
  const Tensor dy = random_tensor(s, layout(), 9);
  for (CpuIsa isa : supported_cpu_isas()) {
    SCOPED_TRACE(to_string(isa));
    ForcedIsa forced(isa);
    auto forward = [&](BatchNormSaved& saved, Tensor& y) {
      Tensor running_mean(ch, layout()), running_var(ch, layout());
      ops.batchnorm_relu_forward_train(ctx, {}, x, gamma, beta, residual() ? &r : nullptr,
                                       running_mean, running_var, saved, y);
    };
    if (residual()) {
      // Keep bn(x) + r at least 0.05 from the kink; r does not move the statistics.
      BatchNormSaved saved;
      Tensor z(s, layout()), running_mean(ch, layout()), running_var(ch, layout());
      ops.batchnorm_forward_train(ctx, {}, x, gamma, beta, running_mean, running_var, saved, z);
      for (int64_t n = 0; n < s.n; ++n)
        for (int64_t c = 0; c < s.c; ++c)
          for (int64_t h = 0; h < s.h; ++h)
            for (int64_t w = 0; w < s.w; ++w) {
              float& rv = r.at(n, c, h, w);
              const float pre = z.at(n, c, h, w) + rv;
              if (pre > -0.05f && pre < 0.05f) rv += pre >= 0 ? 0.1f : -0.1f;
            }
    }
    auto loss = [&] {
      BatchNormSaved saved;
      Tensor y(s, layout());
      forward(saved, y);
      return dot(y, dy);
    };
    BatchNormSaved saved;
    Tensor y(s, layout());
    forward(saved, y);
    Tensor dx(s, layout()), dgamma(ch, layout()), dbeta(ch, layout()), dr(s, layout());
    ops.batchnorm_relu_backward(ctx, x, y, dy, gamma, saved, dx, dgamma, dbeta,
                                residual() ? &dr : nullptr);
    EXPECT_TRUE(gradient_matches(x, dx, loss));
    EXPECT_TRUE(gradient_matches(gamma, dgamma, loss));
    EXPECT_TRUE(gradient_matches(beta, dbeta, loss));
    if (residual()) {
      EXPECT_TRUE(gradient_matches(r, dr, loss));
    }
  }
}

TEST_P(FusedOps, TracesOneNamedKernelEachWay) {
  const Shape4 ch{1, kLarge.c, 1, 1};
  const Tensor x = random_tensor(kLarge, layout(), 1);
  const Tensor r = random_tensor(kLarge, layout(), 2);
  Tensor gamma(ch, layout()), beta(ch, layout()), rm(ch, layout()), rv(ch, layout());
  gamma.fill(1.0f);
  Tensor y(kLarge, layout()), dx(kLarge, layout()), dr(kLarge, layout()), dg(ch, layout()),
      db(ch, layout());
  profiler::Tracer tracer;
  const ExecContext traced{pool, &tracer, /*device=*/0, /*lane=*/0};
  BatchNormSaved saved;
  tracer.start();
  ops.batchnorm_relu_forward_train(traced, {}, x, gamma, beta, residual() ? &r : nullptr, rm, rv,
                                   saved, y);
  ops.batchnorm_relu_backward(traced, x, y, r, gamma, saved, dx, dg, db,
                              residual() ? &dr : nullptr);
  tracer.stop();
  std::vector<std::string> names;
  for (const profiler::Activity& a : tracer.collect({}).activities) names.push_back(a.name);
  const std::string stem = residual() ? "bn_add_relu" : "bn_relu";
  EXPECT_EQ(names, (std::vector<std::string>{stem + ".fwd", stem + ".bwd"}));
}

TEST_P(FusedOps, RefusesAliasedOutputs) {
  const Shape4 ch{1, kLarge.c, 1, 1};
  Tensor x = random_tensor(kLarge, layout(), 1);
  Tensor gamma(ch, layout()), beta(ch, layout()), rm(ch, layout()), rv(ch, layout()),
      dg(ch, layout()), db(ch, layout());
  BatchNormSaved saved;
  EXPECT_THROW(ops.batchnorm_relu_forward_train(ctx, {}, x, gamma, beta, nullptr, rm, rv, saved, x),
               Error);
  Tensor y(kLarge, layout()), dx(kLarge, layout());
  ops.batchnorm_relu_forward_train(ctx, {}, x, gamma, beta, nullptr, rm, rv, saved, y);
  EXPECT_THROW(ops.batchnorm_relu_backward(ctx, x, y, y, gamma, saved, dx, dg, db, &dx), Error);
}

INSTANTIATE_TEST_SUITE_P(Cases, FusedOps,
                         ::testing::Values(FusedCase{Layout::NCHW, false},
                                           FusedCase{Layout::NCHW, true},
                                           FusedCase{Layout::NHWC, false},
                                           FusedCase{Layout::NHWC, true}),
                         case_name);

// The flat kernels on each vector path against the scalar one, on a length with a tail.
TEST(ElementwiseKernels, VectorPathsMatchScalar) {
  const int64_t n = 1000 + 13;
  std::vector<float> a(n), b(n);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto* v : {&a, &b})
    for (float& e : *v) e = dist(rng);
  a[5] = std::numeric_limits<float>::quiet_NaN();  // relu keeps NaN
  const ElementwiseKernelTable& s = elementwise_kernels(CpuIsa::scalar);
  for (CpuIsa isa : supported_cpu_isas()) {
    SCOPED_TRACE(to_string(isa));
    const ElementwiseKernelTable& k = elementwise_kernels(isa);
    std::vector<float> want(n), got(n);
    s.relu_forward(a.data(), want.data(), n);
    k.relu_forward(a.data(), got.data(), n);
    EXPECT_TRUE(std::isnan(got[5]));
    want[5] = got[5] = 0;
    EXPECT_EQ(got, want) << "relu_forward";
    s.relu_backward(a.data(), b.data(), want.data(), n);
    k.relu_backward(a.data(), b.data(), got.data(), n);
    EXPECT_EQ(got, want) << "relu_backward";
    s.add(a.data(), b.data(), want.data(), n);
    k.add(a.data(), b.data(), got.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      if (i != 5) {
        EXPECT_EQ(got[i], want[i]) << "add at " << i;
      }
    }
    want = b;
    got = b;
    s.accumulate(b.data(), want.data(), n);
    k.accumulate(b.data(), got.data(), n);
    EXPECT_EQ(got, want) << "accumulate";
  }
}

TEST(ElementwiseKernels, UnknownForcedPathIsAUsageError) {
  setenv(kElementwiseIsaVariable, "sse9", 1);
  try {
    elementwise_kernels();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("TUNESCOPE_ELEMENTWISE_ISA: unknown path 'sse9'"),
              std::string::npos)
        << e.what();
  }
  unsetenv(kElementwiseIsaVariable);
}

}  // namespace
}  // namespace tunescope::cpu::test_support

namespace tunescope::cpu::test_support {
namespace {

// bias.bwd (the per-channel sums, ChannelRuns.h) on every path and in both layouts, against
// a sum in double in logical order: relative error <= 1e-6 (both sum in double; the result
// is rounded to float once). Channel counts below, at and above the vector widths, and
// planes of one pixel (the fully connected layers' shape).
TEST(ElementwiseKernels, BiasGradientMatchesADoubleSumOnEveryPath) {
  const std::vector<Shape4> shapes = {{7, 1, 5, 5},  {9, 6, 10, 10},  {3, 16, 4, 7},
                                      {5, 17, 3, 5}, {64, 120, 1, 1}, {33, 10, 1, 1}};
  ThreadPool pool(3);
  ExecContext ctx{pool};
  CpuOps ops;
  uint32_t seed = 3;
  for (const Shape4& s : shapes)
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      const Tensor dy = random_tensor(s, layout, seed++);
      Tensor want({1, s.c, 1, 1}, layout);
      for (int64_t c = 0; c < s.c; ++c) {
        double sum = 0;
        for (int64_t n = 0; n < s.n; ++n)
          for (int64_t h = 0; h < s.h; ++h)
            for (int64_t w = 0; w < s.w; ++w) sum += dy.at(n, c, h, w);
        want.data()[c] = static_cast<float>(sum);
      }
      for (CpuIsa isa : supported_cpu_isas()) {
        ForcedIsa forced(isa);
        SCOPED_TRACE(cat(to_string(isa), " ", to_string(layout), " c ", s.c));
        Tensor got({1, s.c, 1, 1}, layout);
        ops.bias_backward(ctx, dy, got);
        EXPECT_TRUE(logically_near(got, want, 1e-6));
      }
    }
}

}  // namespace
}  // namespace tunescope::cpu::test_support
