// The elementwise and per-channel kernels, sixteen lanes per 512-bit vector; built with
// -march=x86-64-v4 (CMakeLists.txt), chosen at run time by ElementwiseIsa.cpp (CpuIsa.h).
#include "kernels/cpu/ElementwiseKernels.h"

namespace tunescope::cpu {

extern const ElementwiseKernelTable kElementwiseAvx512Kernels = elementwise_kernel_table<16>();

}  // namespace tunescope::cpu
