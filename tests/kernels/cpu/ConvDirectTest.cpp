// The `direct` algorithm against the naive reference (forward, backward data, backward
// filter) on a matrix of shapes x both layouts, and its gradients against central
// differences of its own forward pass.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "ConvTestSupport.h"
#include "core/base/Registry.h"

namespace tunescope::conv_test {
namespace {

// Odd sizes, strides 1/2/3, padding 0/1/2/3, 1x1 to 7x7 and non-square kernels, channel
// counts around the 4/8/16-wide tiles and on both sides of the engine switch at 8
// channels, wide rows (16-column tiles), 4x4 maps, batch 1, 2 and 3.
std::vector<NamedProblem> direct_cases() {
  return {
      {"single_3x3", make_problem(1, 1, 7, 7, 1, 3, 3, 1, 1, 0, 0)},
      {"odd_3x3_pad1", make_problem(3, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1)},
      {"5x5_stride2_pad2", make_problem(3, 5, 13, 10, 7, 5, 5, 2, 2, 2, 2)},
      {"1x1", make_problem(1, 2, 8, 8, 3, 1, 1, 1, 1, 0, 0)},
      {"1x1_stride2", make_problem(3, 4, 9, 9, 6, 1, 1, 2, 2, 0, 0)},
      {"1x1_stride2_pad1", make_problem(1, 3, 6, 7, 4, 1, 1, 2, 2, 1, 1)},
      {"7x7_pad2", make_problem(1, 3, 12, 13, 4, 7, 7, 1, 1, 2, 2)},
      {"7x7_stride2_pad3", make_problem(1, 2, 15, 14, 3, 7, 7, 2, 2, 3, 3)},
      {"3x5_stride2x1_pad1x2", make_problem(3, 3, 9, 8, 5, 3, 5, 2, 1, 1, 2)},
      {"channels_17_to_19", make_problem(1, 17, 6, 7, 19, 3, 3, 1, 1, 1, 1)},
      {"channels_9_to_33", make_problem(1, 9, 5, 5, 33, 3, 3, 1, 1, 1, 1)},
      {"wide_rows", make_problem(1, 2, 5, 37, 5, 3, 3, 1, 1, 1, 1)},
      {"wide_rows_stride2", make_problem(3, 3, 6, 40, 6, 3, 3, 2, 2, 1, 1)},
      {"stride3", make_problem(3, 3, 11, 10, 4, 3, 3, 3, 3, 1, 1)},
      {"5x5_stride2_small", make_problem(1, 2, 6, 6, 3, 5, 5, 2, 2, 2, 2)},
      {"lenet_conv1_like", make_problem(1, 1, 16, 16, 6, 5, 5, 1, 1, 0, 0)},
      {"kernel_is_input", make_problem(3, 2, 5, 4, 3, 5, 4, 1, 1, 0, 0)},
      // More than 8 output or input channels switch engines (see ConvDirect.cpp).
      {"stem_like_3_to_16", make_problem(2, 3, 9, 10, 16, 3, 3, 1, 1, 1, 1)},
      {"10_to_12_stride2", make_problem(3, 10, 9, 9, 12, 3, 3, 2, 2, 1, 1)},
      {"projection_1x1_stride2", make_problem(2, 12, 8, 8, 16, 1, 1, 2, 2, 0, 0)},
      {"small_map_16_to_20", make_problem(2, 16, 4, 4, 20, 3, 3, 1, 1, 1, 1)},
      {"wide_9_to_6_5x5", make_problem(1, 9, 7, 21, 6, 5, 5, 1, 2, 2, 1)},
      {"wide_8_to_12", make_problem(2, 8, 5, 33, 12, 3, 3, 1, 1, 1, 1)},
      {"wide_12_to_10_stride2", make_problem(1, 12, 6, 35, 10, 3, 3, 2, 2, 1, 1)},
      // Grouped and depthwise (ConvGrouped.cpp): MobileNet's depthwise 3x3 at strides 1
      // and 2, a channel multiplier of 2, groups of several channels, 1x1 and
      // non-square kernels, padding wider than the kernel's reach.
      {"depthwise_3x3", make_problem(3, 8, 9, 10, 8, 3, 3, 1, 1, 1, 1, 8)},
      {"depthwise_3x3_stride2", make_problem(2, 6, 9, 8, 6, 3, 3, 2, 2, 1, 1, 6)},
      {"depthwise_multiplier2", make_problem(2, 4, 7, 7, 8, 3, 3, 1, 1, 1, 1, 4)},
      {"groups4_16_to_32_stride2", make_problem(2, 16, 8, 9, 32, 3, 3, 2, 2, 1, 1, 4)},
      {"groups2_1x1", make_problem(3, 6, 5, 5, 4, 1, 1, 1, 1, 0, 0, 2)},
      {"groups3_5x3_pad2", make_problem(1, 9, 6, 7, 6, 5, 3, 1, 2, 2, 1, 3)},
  };
}

class DirectMatchesReference : public ::testing::TestWithParam<std::tuple<NamedProblem, Layout>> {
 protected:
  ConvProblem problem() const {
    return with_layout(std::get<0>(GetParam()).problem, std::get<1>(GetParam()));
  }
  std::unique_ptr<ConvAlgorithm> direct = Registry::instance().make_conv_algorithm("cpu", "direct");
  ThreadPool pool{2};
};

// float sums of up to C*R*S = 225 products of values in [-1, 1) against double sums:
// max |direct - reference| / max |reference| <= 2e-5.
constexpr double kDirectTolerance = 2e-5;

TEST_P(DirectMatchesReference, Forward) {
  const ConvProblem p = problem();
  const ConvOperands ops = random_operands(p, 11);
  EXPECT_LE(relative_error(run_forward(*direct, p, pool, ops.x, ops.w),
                           reference_forward(p, ops.x, ops.w)),
            kDirectTolerance)
      << p.key();
}

TEST_P(DirectMatchesReference, BackwardData) {
  const ConvProblem p = problem();
  const ConvOperands ops = random_operands(p, 12);
  EXPECT_LE(relative_error(run_backward_data(*direct, p, pool, ops.dy, ops.w),
                           reference_backward_data(p, ops.dy, ops.w)),
            kDirectTolerance)
      << p.key();
}

TEST_P(DirectMatchesReference, BackwardFilter) {
  const ConvProblem p = problem();
  const ConvOperands ops = random_operands(p, 13);
  EXPECT_LE(relative_error(run_backward_filter(*direct, p, pool, ops.x, ops.dy),
                           reference_backward_filter(p, ops.x, ops.dy)),
            kDirectTolerance)
      << p.key();
}

INSTANTIATE_TEST_SUITE_P(Shapes, DirectMatchesReference,
                         ::testing::Combine(::testing::ValuesIn(direct_cases()),
                                            ::testing::Values(Layout::NCHW, Layout::NHWC)),
                         [](const auto& info) {
                           return std::get<0>(info.param).name + "_" +
                                  to_string(std::get<1>(info.param));
                         });

// loss(x, w) = sum(conv(x, w) * g) for a fixed random g, in double from the float output.
double loss(ConvAlgorithm& algo, const ConvProblem& p, ThreadPool& pool, const Tensor& x,
            const Tensor& w, const Tensor& g) {
  const Tensor y = run_forward(algo, p, pool, x, w);
  double sum = 0.0;
  for (int64_t i = 0; i < y.size(); ++i) sum += static_cast<double>(y.data()[i]) * g.data()[i];
  return sum;
}

// Central differences of the loss against d(loss)/dx = backward_data(g) and
// d(loss)/dw = backward_filter(x, g). The loss is linear in each argument, so the
// difference quotient has no truncation error and a large step (0.25) keeps float
// rounding small: |numeric - analytic| <= 1e-3 * max |analytic| per checked element.
class DirectGradient : public ::testing::TestWithParam<std::tuple<NamedProblem, Layout>> {};

TEST_P(DirectGradient, MatchesCentralDifferences) {
  const ConvProblem p = with_layout(std::get<0>(GetParam()).problem, std::get<1>(GetParam()));
  auto direct = Registry::instance().make_conv_algorithm("cpu", "direct");
  ThreadPool pool(2);
  ConvOperands ops = random_operands(p, 21);
  const Tensor& g = ops.dy;
  const Tensor dx = run_backward_data(*direct, p, pool, g, ops.w);
  const Tensor dw = run_backward_filter(*direct, p, pool, ops.x, g);
  constexpr float kStep = 0.25f;
  constexpr double kTolerance = 1e-3;

  auto check = [&](Tensor& param, const Tensor& grad, const char* what, int samples) {
    double max_grad = 0.0;
    for (int64_t i = 0; i < grad.size(); ++i)
      max_grad = std::max(max_grad, std::abs(double{grad.data()[i]}));
    std::mt19937 rng(5);
    std::uniform_int_distribution<int64_t> pick(0, param.size() - 1);
    for (int i = 0; i < samples; ++i) {
      const int64_t at = samples >= param.size() ? i % param.size() : pick(rng);
      const float saved = param.data()[at];
      param.data()[at] = saved + kStep;
      const double plus = loss(*direct, p, pool, ops.x, ops.w, g);
      param.data()[at] = saved - kStep;
      const double minus = loss(*direct, p, pool, ops.x, ops.w, g);
      param.data()[at] = saved;
      const double numeric = (plus - minus) / (2.0 * kStep);
      EXPECT_NEAR(numeric, grad.data()[at], kTolerance * max_grad)
          << what << " element " << at << " of " << p.key();
    }
  };
  check(ops.x, dx, "dx", 24);
  check(ops.w, dw, "dw", static_cast<int>(std::min<int64_t>(ops.w.size(), 24)));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DirectGradient,
    ::testing::Combine(
        ::testing::Values(
            NamedProblem{"3x3_stride2_pad1", make_problem(2, 3, 7, 6, 4, 3, 3, 2, 2, 1, 1)},
            NamedProblem{"5x5_pad2", make_problem(1, 2, 6, 7, 3, 5, 5, 1, 1, 2, 2)},
            NamedProblem{"2x3_stride1x2_pad0x1", make_problem(2, 3, 5, 8, 2, 2, 3, 1, 2, 0, 1)},
            NamedProblem{"depthwise_3x3_stride2", make_problem(2, 4, 7, 6, 4, 3, 3, 2, 2, 1, 1, 4)},
            NamedProblem{"groups2_multiplier2", make_problem(1, 4, 5, 6, 8, 3, 3, 1, 1, 1, 1, 2)}),
        ::testing::Values(Layout::NCHW, Layout::NHWC)),
    [](const auto& info) {
      return std::get<0>(info.param).name + "_" + to_string(std::get<1>(info.param));
    });

}  // namespace
}  // namespace tunescope::conv_test
