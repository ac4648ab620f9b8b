// One run of every op on a tensor large enough to be split over a pool, with inputs
// defined by logical index: the same case runs in either layout, on any pool, with its
// tensors in any memory space and on any backend's ops — for the CPU's layout,
// thread-count, tracer and separate-memory tests, and for the CUDA ops, which must
// match the CPU ops case by case (tests/kernels/cuda/CudaOpsMatchCpuTest.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/base/OpKernels.h"

namespace tunescope::cpu::test_support {

struct OpCase {
  std::string name;
  // Kernel names the run records, in any order.
  std::vector<std::string> kernels;
  // Runs the op(s) with inputs in `layout` placed in `memory` (made on the host, copied
  // there) and returns every output as a host tensor (loss values as 1x1x1x1).
  std::function<std::vector<Tensor>(OpKernels& ops, const ExecContext& ctx, Layout layout,
                                    MemorySpace& memory)>
      run;
  // Allowed NCHW/NHWC difference, relative to max(1, |value|). The layouts add the same
  // terms in different orders only where a reduction runs over the flattened item.
  double layout_tolerance = 1e-5;
  // Allowed difference between two backends' ops on the same inputs, relative to
  // max(1, |value|): float terms combined in another order (a GPU reduction tree, a
  // cuBLAS GEMM), and expf against std::exp (a few ulp).
  double backend_tolerance = 1e-5;
};

// Every op of the kernel contract except the collectives.
std::vector<OpCase> op_cases();
// scatter_rows (from a host batch and from one in `memory`), allreduce_sum (into one of
// its sources) and broadcast: the data movement of a split batch; copy_to_host and
// copy_from_host: that of the update on the host.
std::vector<OpCase> collective_cases();

}  // namespace tunescope::cpu::test_support
