// The batch-lane direct convolution's kernels, sixteen lanes per 512-bit vector; built with
// -march=x86-64-v4 (CMakeLists.txt), chosen at run time by ConvDirectLanes.cpp (CpuIsa.h).
#include "kernels/cpu/LaneConvKernels.h"

namespace tunescope::cpu {

extern const LaneConvKernelTable kLaneConvAvx512Kernels = lane_conv_kernel_table<16>();

}  // namespace tunescope::cpu
