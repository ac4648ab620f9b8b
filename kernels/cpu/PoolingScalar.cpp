// Max pooling over tiled windows, any x86-64 CPU; built with -march=x86-64 -mno-avx
// (CMakeLists.txt), chosen at run time by ElementwiseIsa.cpp (CpuIsa.h).
#include "kernels/cpu/PoolingKernels.h"

namespace tunescope::cpu {

extern const PoolingKernelTable kPoolingScalarKernels = pooling_kernel_table<1>();

}  // namespace tunescope::cpu
