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

const PoolingKernelTable& pooling_kernels(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::avx512: return kPoolingAvx512Kernels;
    case CpuIsa::avx2: return kPoolingAvx2Kernels;
    default: return kPoolingScalarKernels;
  }
}

const PoolingKernelTable& pooling_kernels() {
  return pooling_kernels(cpu_isa_from_environment(kElementwiseIsaVariable));
}

}  // namespace tunescope::cpu
