// OwnFft2d's kernels, eight planes per vector with AVX-512 F/BW/DQ/VL (EVEX encoding, 32
// vector registers for the radix-4 and radix-5 butterflies); built with
// -march=x86-64-v4 (CMakeLists.txt), chosen at run time by OwnFftIsa.cpp.
#include "kernels/cpu/OwnFftKernels.h"
#include "kernels/cpu/Vec8.h"

namespace tunescope::cpu {

extern const OwnFftKernelTable kOwnFftAvx512Kernels = kernel_table<Vec8>();

}  // namespace tunescope::cpu
