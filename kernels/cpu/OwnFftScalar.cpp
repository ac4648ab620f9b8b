// OwnFft2d's kernels, one plane at a time, for any x86-64 CPU; built with
// -march=x86-64 -mno-avx (CMakeLists.txt), chosen at run time by OwnFftIsa.cpp.
#include "kernels/cpu/OwnFftKernels.h"

namespace tunescope::cpu {

extern const OwnFftKernelTable kOwnFftScalarKernels = kernel_table<float>();

}  // namespace tunescope::cpu
