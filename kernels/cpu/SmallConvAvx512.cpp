// The few-channel direct convolution's kernels, sixteen lanes per 512-bit vector; built with
// -march=x86-64-v4 (CMakeLists.txt), chosen at run time by ConvDirectSmall.cpp (CpuIsa.h).
#include "kernels/cpu/SmallConvKernels.h"

namespace tunescope::cpu {

extern const SmallConvKernelTable kSmallConvAvx512Kernels = small_conv_kernel_table<16>();

}  // namespace tunescope::cpu
