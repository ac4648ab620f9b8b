// Which instruction set OwnFft2d's kernels run on, chosen at run time: each is built in
// its own file with its own -march, so a TUNESCOPE_PORTABLE build still uses AVX-512 on
// a CPU that has it. TUNESCOPE_FFT_ISA=scalar|avx2|avx512 forces one (to compare them,
// or to rule a path out).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace tunescope::cpu {

struct OwnFftKernelTable;

enum class OwnFftIsa { scalar, avx2, avx512 };

const char* to_string(OwnFftIsa isa);
std::optional<OwnFftIsa> parse_own_fft_isa(std::string_view text);
// Whether this CPU runs the path (scalar: always).
bool cpu_supports(OwnFftIsa isa);
// Every path this CPU runs, narrowest first.
std::vector<OwnFftIsa> supported_own_fft_isas();
// TUNESCOPE_FFT_ISA when set, else the widest supported path. Throws Error(usage) naming
// the variable for an unknown path or one this CPU lacks.
OwnFftIsa default_own_fft_isa();
const OwnFftKernelTable& own_fft_kernels(OwnFftIsa isa);

}  // namespace tunescope::cpu
