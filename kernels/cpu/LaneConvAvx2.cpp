// The batch-lane direct convolution's kernels, eight lanes per 256-bit vector; built with
// -march=x86-64-v3 -mno-avx512f (CMakeLists.txt), chosen at run time by ConvDirectLanes.cpp
// (CpuIsa.h).
#include "kernels/cpu/LaneConvKernels.h"

namespace tunescope::cpu {

extern const LaneConvKernelTable kLaneConvAvx2Kernels = lane_conv_kernel_table<8>();

}  // namespace tunescope::cpu
