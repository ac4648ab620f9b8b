// direct-small on every kernel path this CPU runs (TUNESCOPE_SMALL_CONV_ISA forces each),
// all three passes, against the double-precision reference convolution: relative error at
// most 1e-4 (tolerance_for("direct-small"): float sums in another order, as gemm). The
// shapes cover LeNet-5's two layers, a ResNet stem (3 -> 16, 3x3, padding 1), rows shorter
// than a vector (width 3), widths that leave every tail length of the vector cascade, and
// channel counts past one block of eight (12 in, 17 out). The layouts and strides it
// refuses are refused with a reason.
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

constexpr const char* kSmallIsaVariable = "TUNESCOPE_SMALL_CONV_ISA";

TEST(ConvDirectSmall, AllPassesMatchTheReferenceOnEveryPath) {
  const std::vector<ConvProblem> problems = {
      make_problem(3, 1, 32, 32, 6, 5, 5, 1, 1, 0, 0),   // LeNet-5 conv1
      make_problem(2, 6, 14, 14, 16, 5, 5, 1, 1, 0, 0),  // LeNet-5 conv2
      make_problem(2, 3, 17, 19, 16, 3, 3, 1, 1, 1, 1),  // a ResNet stem
      make_problem(2, 2, 5, 3, 5, 3, 2, 1, 1, 1, 0),     // rows shorter than a vector
      make_problem(1, 8, 9, 45, 17, 3, 4, 1, 1, 2, 1),   // tails 16 + 8 + 4 + 1 and 17 out
      make_problem(2, 5, 6, 23, 12, 1, 1, 1, 1, 0, 0)};
  ThreadPool pool(3);
  const double tolerance = tolerance_for("direct-small");
  uint32_t seed = 5;
  for (const ConvProblem& p : problems) {
    const ConvOperands o = random_operands(p, seed++);
    const Tensor want_y = reference_forward(p, o.x, o.w);
    const Tensor want_dx = reference_backward_data(p, o.dy, o.w);
    const Tensor want_dw = reference_backward_filter(p, o.x, o.dy);
    for (cpu::CpuIsa isa : cpu::supported_cpu_isas()) {
      const tunescope::test_support::ScopedEnv forced(kSmallIsaVariable, cpu::to_string(isa));
      SCOPED_TRACE(p.key() + " on " + cpu::to_string(isa));
      auto algo = Registry::instance().make_conv_algorithm("cpu", "direct-small");
      ASSERT_TRUE(algo->supports(p)) << algo->unsupported_reason(p);
      EXPECT_LE(relative_error(run_forward(*algo, p, pool, o.x, o.w), want_y), tolerance);
      EXPECT_LE(relative_error(run_backward_data(*algo, p, pool, o.dy, o.w), want_dx), tolerance);
      EXPECT_LE(relative_error(run_backward_filter(*algo, p, pool, o.x, o.dy), want_dw), tolerance);
    }
  }
}

TEST(ConvDirectSmall, RefusesWhatItDoesNotRunWithAReason) {
  auto algo = Registry::instance().make_conv_algorithm("cpu", "direct-small");
  const ConvProblem lenet = make_problem(2, 1, 32, 32, 6, 5, 5, 1, 1, 0, 0);
  EXPECT_NE(algo->unsupported_reason(with_layout(lenet, Layout::NHWC)).find("NCHW"),
            std::string::npos);
  EXPECT_NE(
      algo->unsupported_reason(make_problem(2, 3, 32, 32, 16, 3, 3, 2, 2, 1, 1)).find("stride"),
      std::string::npos);
  EXPECT_NE(algo->unsupported_reason(make_problem(2, 16, 8, 8, 16, 3, 3, 1, 1, 1, 1))
                .find("few channels"),
            std::string::npos);
}

}  // namespace
}  // namespace tunescope::conv_test
