// The Winograd transform kernels, sixteen lanes per 512-bit vector; built with -march=x86-64-v4
// (CMakeLists.txt), chosen at run time by ConvWinograd.cpp (CpuIsa.h).
#include "kernels/cpu/WinogradKernels.h"

namespace tunescope::cpu {

extern const WinogradKernelTable kWinogradAvx512Kernels = winograd_kernel_table<16>();

}  // namespace tunescope::cpu
