// The elementwise and per-channel kernels, any x86-64 CPU; built with -march=x86-64 -mno-avx
// (CMakeLists.txt), chosen at run time by ElementwiseIsa.cpp (CpuIsa.h).
#include "kernels/cpu/ElementwiseKernels.h"

namespace tunescope::cpu {

extern const ElementwiseKernelTable kElementwiseScalarKernels = elementwise_kernel_table<1>();

}  // namespace tunescope::cpu
