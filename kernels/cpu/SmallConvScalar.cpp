// The few-channel direct convolution's kernels, any x86-64 CPU; built with -march=x86-64 -mno-avx
// (CMakeLists.txt), chosen at run time by ConvDirectSmall.cpp (CpuIsa.h).
#include "kernels/cpu/SmallConvKernels.h"

namespace tunescope::cpu {

extern const SmallConvKernelTable kSmallConvScalarKernels = small_conv_kernel_table<1>();

}  // namespace tunescope::cpu
