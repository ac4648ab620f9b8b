// direct-lanes on every kernel path this CPU runs (TUNESCOPE_LANE_CONV_ISA forces each), all
// three passes, NCHW and NHWC, against the double-precision reference convolution: relative
// error at most 1e-4 (tolerance_for("direct-lanes"): float sums in another order, as gemm).
// The shapes cover LeNet-5's two layers, a ResNet stem (3 -> 16, 3x3, padding 1), batches
// that leave a partial block of sixteen (3, 17, 35), channel counts that take every channel
// block (4, 3 and single channels: 6, 16, 7, 1), rows shorter than a register tile (width
// 3), filters wider than one tile of columns (7), and backward data both ways: scattered
// (no padding: LeNet-5's conv2, the 1x1 and 2x7 layers) and correlated (the padded ones).
// What it refuses is refused with a reason. With a saved buffer, backward filter reads x's
// blocks as forward transposed them: the very bits of the recomputing pass while x is the
// tensor forward saw, and a recomputation for any other tensor.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ConvTestSupport.h"
#include "core/base/AlignedBuffer.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuIsa.h"
#include "tests/core/ScopedEnv.h"

namespace tunescope::conv_test {
namespace {

constexpr const char* kLanesIsaVariable = "TUNESCOPE_LANE_CONV_ISA";

TEST(ConvDirectLanes, AllPassesMatchTheReferenceOnEveryPathInBothLayouts) {
  const std::vector<ConvProblem> problems = {
      make_problem(17, 1, 28, 28, 6, 5, 5, 1, 1, 2, 2),  // LeNet-5 conv1 (padded), 1 + 16
      make_problem(3, 6, 14, 14, 16, 5, 5, 1, 1, 0, 0),  // LeNet-5 conv2
      make_problem(2, 3, 17, 19, 16, 3, 3, 1, 1, 1, 1),  // a ResNet stem
      make_problem(35, 2, 5, 3, 7, 3, 2, 1, 1, 1, 0),    // rows shorter than a tile, 7 out
      make_problem(4, 4, 9, 13, 1, 3, 7, 1, 1, 2, 3),    // one output channel, 7 columns
      make_problem(3, 2, 9, 12, 5, 2, 7, 1, 1, 0, 0),    // unpadded, 7 columns, rows of 6
      make_problem(2, 5, 6, 23, 12, 1, 1, 1, 1, 0, 0)};
  ThreadPool pool(3);
  const double tolerance = tolerance_for("direct-lanes");
  uint32_t seed = 11;
  for (const ConvProblem& base : problems)
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      const ConvProblem p = with_layout(base, layout);
      const ConvOperands o = random_operands(p, seed++);
      const Tensor want_y = reference_forward(p, o.x, o.w);
      const Tensor want_dx = reference_backward_data(p, o.dy, o.w);
      const Tensor want_dw = reference_backward_filter(p, o.x, o.dy);
      for (cpu::CpuIsa isa : cpu::supported_cpu_isas()) {
        const tunescope::test_support::ScopedEnv forced(kLanesIsaVariable, cpu::to_string(isa));
        SCOPED_TRACE(p.key() + " on " + cpu::to_string(isa));
        auto algo = Registry::instance().make_conv_algorithm("cpu", "direct-lanes");
        ASSERT_TRUE(algo->supports(p)) << algo->unsupported_reason(p);
        EXPECT_LE(relative_error(run_forward(*algo, p, pool, o.x, o.w), want_y), tolerance);
        EXPECT_LE(relative_error(run_backward_data(*algo, p, pool, o.dy, o.w), want_dx), tolerance);
        EXPECT_LE(relative_error(run_backward_filter(*algo, p, pool, o.x, o.dy), want_dw),
                  tolerance);
      }
    }
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.size() != b.size()) return false;
  for (int64_t i = 0; i < a.size(); ++i)
    if (a.data()[i] != b.data()[i]) return false;
  return true;
}

// forward on x, then backward filter on x_for_backward, on one call with a saved buffer
// (or none); returns dw. With scribble, x is overwritten between the passes (which the
// engine never does): only a pass that reads forward's transposes still sees the old x.
Tensor forward_then_filter(ConvAlgorithm& algo, const ConvProblem& p, ThreadPool& pool, Tensor& x,
                           const ConvOperands& o, const Tensor& x_for_backward,
                           AlignedBuffer* saved, bool scribble = false) {
  AlignedBuffer workspace(algo.workspace_bytes(p));
  const ExecContext exec{pool, nullptr, 0, 0};
  const ConvCall call = call_over(p, exec, workspace, saved);
  Tensor y(p.output(), p.layout), dw(p.filter(), p.layout);
  algo.forward(call, x, o.w, y);
  if (scribble) fill_uniform(x, 99);
  algo.backward_filter(call, x_for_backward, o.dy, dw);
  return dw;
}

TEST(ConvDirectLanes, BackwardFilterReusesForwardsTransposedInput) {
  ThreadPool pool(2);
  uint32_t seed = 41;
  for (const ConvProblem& base : {make_problem(17, 1, 28, 28, 6, 5, 5, 1, 1, 2, 2),
                                  make_problem(35, 6, 14, 14, 16, 5, 5, 1, 1, 0, 0)})
    for (Layout layout : {Layout::NCHW, Layout::NHWC})
      for (cpu::CpuIsa isa : cpu::supported_cpu_isas()) {
        const tunescope::test_support::ScopedEnv forced(kLanesIsaVariable, cpu::to_string(isa));
        const ConvProblem p = with_layout(base, layout);
        SCOPED_TRACE(p.key() + " on " + cpu::to_string(isa));
        const ConvOperands o = random_operands(p, seed++);
        auto algo = Registry::instance().make_conv_algorithm("cpu", "direct-lanes");
        ASSERT_GT(algo->saved_bytes(p), 0u);
        AlignedBuffer saved(algo->saved_bytes(p));
        Tensor x = o.x;
        const Tensor plain = forward_then_filter(*algo, p, pool, x, o, x, nullptr);
        EXPECT_LE(relative_error(plain, reference_backward_filter(p, o.x, o.dy)),
                  tolerance_for("direct-lanes"));
        x = o.x;
        EXPECT_TRUE(same_bits(forward_then_filter(*algo, p, pool, x, o, x, &saved), plain));
        // The buffer is read: x overwritten in place after forward, dw is still forward's x's.
        x = o.x;
        EXPECT_TRUE(same_bits(forward_then_filter(*algo, p, pool, x, o, x, &saved, true), plain));
        // Another tensor: transposed again, not read from the buffer.
        Tensor other_x(p.input, p.layout);
        fill_uniform(other_x, seed++);
        x = o.x;
        EXPECT_LE(relative_error(forward_then_filter(*algo, p, pool, x, o, other_x, &saved),
                                 reference_backward_filter(p, other_x, o.dy)),
                  tolerance_for("direct-lanes"));
      }
}

TEST(ConvDirectLanes, RefusesWhatItDoesNotRunWithAReason) {
  auto algo = Registry::instance().make_conv_algorithm("cpu", "direct-lanes");
  EXPECT_NE(
      algo->unsupported_reason(make_problem(2, 3, 32, 32, 16, 3, 3, 2, 2, 1, 1)).find("stride"),
      std::string::npos);
  EXPECT_NE(
      algo->unsupported_reason(make_problem(2, 3, 32, 32, 16, 3, 3, 1, 1, 3, 3)).find("padding"),
      std::string::npos);
  EXPECT_NE(algo->unsupported_reason(make_problem(2, 64, 32, 32, 64, 3, 3, 1, 1, 1, 1))
                .find("small layers"),
            std::string::npos);
}

}  // namespace
}  // namespace tunescope::conv_test
