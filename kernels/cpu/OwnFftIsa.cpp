#include "kernels/cpu/OwnFftIsa.h"

#include <cstdlib>
#include <string>

#include "core/base/Error.h"
#include "kernels/cpu/OwnFftKernelTable.h"

namespace tunescope::cpu {

const char* to_string(OwnFftIsa isa) {
  switch (isa) {
    case OwnFftIsa::avx512: return "avx512";
    case OwnFftIsa::avx2: return "avx2";
    default: return "scalar";
  }
}

std::optional<OwnFftIsa> parse_own_fft_isa(std::string_view text) {
  for (OwnFftIsa isa : {OwnFftIsa::scalar, OwnFftIsa::avx2, OwnFftIsa::avx512})
    if (text == to_string(isa)) return isa;
  return std::nullopt;
}

bool cpu_supports(OwnFftIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  switch (isa) {
    case OwnFftIsa::avx512:
      // What -march=x86-64-v4 may use.
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
             cpu_supports(OwnFftIsa::avx2);
    case OwnFftIsa::avx2:
      // What -march=x86-64-v3 may use.
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("bmi2");
    default: return true;
  }
#else
  return isa == OwnFftIsa::scalar;
#endif
}

std::vector<OwnFftIsa> supported_own_fft_isas() {
  std::vector<OwnFftIsa> out;
  for (OwnFftIsa isa : {OwnFftIsa::scalar, OwnFftIsa::avx2, OwnFftIsa::avx512})
    if (cpu_supports(isa)) out.push_back(isa);
  return out;
}

OwnFftIsa default_own_fft_isa() {
  const char* forced = std::getenv("TUNESCOPE_FFT_ISA");
  if (!forced || !*forced) return supported_own_fft_isas().back();
  const auto isa = parse_own_fft_isa(forced);
  if (!isa)
    fail(ErrorKind::usage, "TUNESCOPE_FFT_ISA: unknown path '", forced, "' (known: scalar, avx2, avx512)");
  if (!cpu_supports(*isa))
    fail(ErrorKind::usage, "TUNESCOPE_FFT_ISA: this CPU cannot run the ", forced, " path");
  return *isa;
}

const OwnFftKernelTable& own_fft_kernels(OwnFftIsa isa) {
  switch (isa) {
    case OwnFftIsa::avx512: return kOwnFftAvx512Kernels;
    case OwnFftIsa::avx2: return kOwnFftAvx2Kernels;
    default: return kOwnFftScalarKernels;
  }
}

}  // namespace tunescope::cpu
