// The few-channel direct convolution's kernels, eight lanes per 256-bit vector; built with
// -march=x86-64-v3 -mno-avx512f (CMakeLists.txt), chosen at run time by ConvDirectSmall.cpp
// (CpuIsa.h).
#include "kernels/cpu/SmallConvKernels.h"

namespace tunescope::cpu {

extern const SmallConvKernelTable kSmallConvAvx2Kernels = small_conv_kernel_table<8>();

}  // namespace tunescope::cpu
