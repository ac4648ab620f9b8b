// Max pooling over tiled windows, eight lanes per 256-bit vector; built with -march=x86-64-v3
// -mno-avx512f (CMakeLists.txt), chosen at run time by ElementwiseIsa.cpp (CpuIsa.h).
#include "kernels/cpu/PoolingKernels.h"

namespace tunescope::cpu {

extern const PoolingKernelTable kPoolingAvx2Kernels = pooling_kernel_table<8>();

}  // namespace tunescope::cpu
