// The Winograd transform kernels, any x86-64 CPU; built with -march=x86-64 -mno-avx
// (CMakeLists.txt), chosen at run time by ConvWinograd.cpp (CpuIsa.h).
#include "kernels/cpu/WinogradKernels.h"

namespace tunescope::cpu {

extern const WinogradKernelTable kWinogradScalarKernels = winograd_kernel_table<1>();

}  // namespace tunescope::cpu
