// The FMA-peak probe's AVX-512 kernel: 16 chains of 512-bit FMA (of 32 registers);
// built with -march=x86-64-v4 (CMakeLists.txt).
#include "kernels/cpu/FmaChainKernels.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace tunescope::cpu {

#if defined(__AVX512F__)
namespace {
double run(int64_t iterations, float a, float b, float start) {
  return run_fma_chains<__m512, 16>(
      iterations, a, b, start, [](float x) { return _mm512_set1_ps(x); },
      [](__m512 acc, __m512 x, __m512 y) { return _mm512_fmadd_ps(acc, x, y); },
      [](__m512 v) {
        alignas(64) float lanes[16];
        _mm512_store_ps(lanes, v);
        double s = 0;
        for (float f : lanes) s += f;
        return s;
      });
}
}  // namespace

extern const FmaChainKernel kFmaChainAvx512{16, 16, run};
#else
// Not an x86-64 build: cpu_supports() never picks this path.
extern const FmaChainKernel kFmaChainAvx512{16, 16, nullptr};
#endif

}  // namespace tunescope::cpu
