#include "kernels/cpu/CpuIsa.h"

#include <cstdlib>

#include "core/base/Error.h"

namespace tunescope::cpu {

const char* to_string(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::avx512: return "avx512";
    case CpuIsa::avx2: return "avx2";
    default: return "scalar";
  }
}

std::optional<CpuIsa> parse_cpu_isa(std::string_view text) {
  for (CpuIsa isa : {CpuIsa::scalar, CpuIsa::avx2, CpuIsa::avx512})
    if (text == to_string(isa)) return isa;
  return std::nullopt;
}

bool cpu_supports(CpuIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  switch (isa) {
    case CpuIsa::avx512:
      // What -march=x86-64-v4 may use.
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
             cpu_supports(CpuIsa::avx2);
    case CpuIsa::avx2:
      // What -march=x86-64-v3 may use.
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("bmi2");
    default: return true;
  }
#else
  return isa == CpuIsa::scalar;
#endif
}

std::vector<CpuIsa> supported_cpu_isas() {
  std::vector<CpuIsa> out;
  for (CpuIsa isa : {CpuIsa::scalar, CpuIsa::avx2, CpuIsa::avx512})
    if (cpu_supports(isa)) out.push_back(isa);
  return out;
}

CpuIsa cpu_isa_from_environment(const char* variable) {
  const char* forced = std::getenv(variable);
  if (!forced || !*forced) return supported_cpu_isas().back();
  const auto isa = parse_cpu_isa(forced);
  if (!isa)
    fail(ErrorKind::usage, variable, ": unknown path '", forced, "' (known: scalar, avx2, avx512)");
  if (!cpu_supports(*isa))
    fail(ErrorKind::usage, variable, ": this CPU cannot run the ", forced, " path");
  return *isa;
}

}  // namespace tunescope::cpu
