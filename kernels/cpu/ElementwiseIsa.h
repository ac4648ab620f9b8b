// Which instruction set the CPU's elementwise, batch-norm and max-pooling kernels run on, chosen at
// run time (CpuIsa.h): TUNESCOPE_ELEMENTWISE_ISA=scalar|avx2|avx512 forces one (to compare
// them, or to rule a path out), else the widest this CPU runs. Read on every op call, so
// a test may switch paths between calls.
#pragma once

#include "kernels/cpu/CpuIsa.h"
#include "kernels/cpu/ElementwiseKernelTable.h"
#include "kernels/cpu/PoolingKernelTable.h"

namespace tunescope::cpu {

inline constexpr const char* kElementwiseIsaVariable = "TUNESCOPE_ELEMENTWISE_ISA";

const ElementwiseKernelTable& elementwise_kernels(CpuIsa isa);
// The table of TUNESCOPE_ELEMENTWISE_ISA's path or the widest supported one. Throws
// Error(usage) naming the variable for an unknown path or one this CPU lacks.
const ElementwiseKernelTable& elementwise_kernels();
// Max pooling's kernels on the same path (the same variable).
const PoolingKernelTable& pooling_kernels(CpuIsa isa);
const PoolingKernelTable& pooling_kernels();

}  // namespace tunescope::cpu
