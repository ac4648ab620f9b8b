// The batch-lane direct convolution's kernels, one float per lane; built with -march=x86-64
// -mno-avx (CMakeLists.txt), chosen at run time by ConvDirectLanes.cpp (CpuIsa.h).
#include "kernels/cpu/LaneConvKernels.h"

namespace tunescope::cpu {

extern const LaneConvKernelTable kLaneConvScalarKernels = lane_conv_kernel_table<1>();

}  // namespace tunescope::cpu
