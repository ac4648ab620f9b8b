// OwnFft2d's kernels, eight planes per 256-bit vector with AVX2 and FMA; built with
// -march=x86-64-v3 -mno-avx512f (CMakeLists.txt), chosen at run time by OwnFftIsa.cpp.
#include "kernels/cpu/OwnFftKernels.h"
#include "kernels/cpu/Vec8.h"

namespace tunescope::cpu {

extern const OwnFftKernelTable kOwnFftAvx2Kernels = kernel_table<Vec8>();

}  // namespace tunescope::cpu
