// Max pooling over tiled windows, sixteen lanes per 512-bit vector; built with -march=x86-64-v4
// (CMakeLists.txt), chosen at run time by ElementwiseIsa.cpp (CpuIsa.h).
#include "kernels/cpu/PoolingKernels.h"

namespace tunescope::cpu {

extern const PoolingKernelTable kPoolingAvx512Kernels = pooling_kernel_table<16>();

}  // namespace tunescope::cpu
