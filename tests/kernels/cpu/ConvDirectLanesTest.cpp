// direct-lanes on every kernel path this CPU runs (TUNESCOPE_LANE_CONV_ISA forces each), all
// three passes, NCHW and NHWC, against the double-precision reference convolution: relative
// error at most 1e-4 (tolerance_for("direct-lanes"): float sums in another order, as gemm).
// The shapes cover LeNet-5's two layers, a ResNet stem (3 -> 16, 3x3, padding 1), batches
// that leave a partial block of sixteen (3, 17, 35), channel counts that take every channel
// block (4, 3 and single channels: 6, 16, 7, 1), rows shorter than a register tile (width
// 3), filters wider than one tile of columns (7), and backward data both ways: scattered
// (no padding: LeNet-5's conv2, the 1x1 and 2x7 layers) and correlated (the padded ones).
// What it refuses is refused with a reason.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ConvTestSupport.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuIsa.h"
#include "tests/core/ScopedEnv.h"

namespace tunescope::conv_test {
namespace {

constexpr const char* kIsaVariable = "TUNESCOPE_LANE_CONV_ISA";

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
        const tunescope::testing::ScopedEnv forced(kIsaVariable, cpu::to_string(isa));
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
