#include "kernels/cpu/ElementwiseIsa.h"

namespace tunescope::cpu {

const ElementwiseKernelTable& elementwise_kernels(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::avx512: return kElementwiseAvx512Kernels;
    case CpuIsa::avx2: return kElementwiseAvx2Kernels;
    default: return kElementwiseScalarKernels;
  }
}

const ElementwiseKernelTable& elementwise_kernels() {
  return elementwise_kernels(cpu_isa_from_environment(kElementwiseIsaVariable));
}

}  // namespace tunescope::cpu
