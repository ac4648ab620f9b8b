// Which instruction set OwnFft2d's kernels run on, chosen at run time (CpuIsa.h): each is
// built in its own file with its own -march, so a TUNESCOPE_PORTABLE build still uses
// AVX-512 on a CPU that has it. TUNESCOPE_FFT_ISA=scalar|avx2|avx512 forces one (to
// compare them, or to rule a path out).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "kernels/cpu/CpuIsa.h"

namespace tunescope::cpu {

struct OwnFftKernelTable;

using OwnFftIsa = CpuIsa;

inline std::optional<OwnFftIsa> parse_own_fft_isa(std::string_view text) {
  return parse_cpu_isa(text);
}
inline std::vector<OwnFftIsa> supported_own_fft_isas() { return supported_cpu_isas(); }
// TUNESCOPE_FFT_ISA when set, else the widest supported path. Throws Error(usage) naming
// the variable for an unknown path or one this CPU lacks.
inline OwnFftIsa default_own_fft_isa() { return cpu_isa_from_environment("TUNESCOPE_FFT_ISA"); }
const OwnFftKernelTable& own_fft_kernels(OwnFftIsa isa);

}  // namespace tunescope::cpu
