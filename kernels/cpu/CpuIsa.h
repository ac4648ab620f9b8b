// The instruction sets our own vector kernels are built for (each in its own file with
// its own -march, CMakeLists.txt), and the run-time choice among them: the widest this
// CPU runs, unless an environment variable forces one (to compare the paths, or to rule
// one out). Shared by the own FFT (TUNESCOPE_FFT_ISA), Winograd (TUNESCOPE_WINOGRAD_ISA) and
// the elementwise / batch-norm kernels (TUNESCOPE_ELEMENTWISE_ISA).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace tunescope::cpu {

enum class CpuIsa { scalar, avx2, avx512 };

const char* to_string(CpuIsa isa);
std::optional<CpuIsa> parse_cpu_isa(std::string_view text);
// Whether this CPU runs the path (scalar: always).
bool cpu_supports(CpuIsa isa);
// Every path this CPU runs, narrowest first.
std::vector<CpuIsa> supported_cpu_isas();
// The path named by the environment variable `variable` when it is set and not empty,
// else the widest supported one. Throws Error(usage) naming the variable for an unknown
// path or one this CPU lacks.
CpuIsa cpu_isa_from_environment(const char* variable);

}  // namespace tunescope::cpu
