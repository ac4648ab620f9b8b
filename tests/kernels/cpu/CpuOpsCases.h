// One run of every CPU op on a tensor large enough to be split over a pool, with
// inputs defined by logical index: the same case runs in either layout and on any pool,
// for the layout-equivalence, thread-count and tracer tests.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/base/OpKernels.h"

namespace tunescope::cpu::testing {

struct OpCase {
  std::string name;
  // Kernel names the run records, in any order.
  std::vector<std::string> kernels;
  // Runs the op(s) with inputs in `layout` and returns every output (loss values as 1x1x1x1).
  std::function<std::vector<Tensor>(OpKernels& ops, const ExecContext& ctx, Layout layout)> run;
  // Allowed NCHW/NHWC difference, relative to max(1, |value|). The layouts add the same
  // terms in different orders only where a reduction runs over the flattened item.
  double layout_tolerance = 1e-5;
};

std::vector<OpCase> op_cases();

}  // namespace tunescope::cpu::testing
