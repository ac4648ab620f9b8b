// The Winograd transform kernels, eight lanes per 256-bit vector; built with -march=x86-64-v3
// -mno-avx512f (CMakeLists.txt), chosen at run time by ConvWinograd.cpp (CpuIsa.h).
#include "kernels/cpu/WinogradKernels.h"

namespace tunescope::cpu {

extern const WinogradKernelTable kWinogradAvx2Kernels = winograd_kernel_table<8>();

}  // namespace tunescope::cpu
