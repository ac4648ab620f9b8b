// The FMA-peak probe's AVX2 kernel: 12 chains of 256-bit FMA (16 registers: 12
// accumulators and the two operands); built with -march=x86-64-v3 (CMakeLists.txt).
#include "kernels/cpu/FmaChainKernels.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tunescope::cpu {

#if defined(__AVX2__)
namespace {
double run(int64_t iterations, float a, float b, float start) {
  return run_fma_chains<__m256, 12>(
      iterations, a, b, start, [](float x) { return _mm256_set1_ps(x); },
      [](__m256 acc, __m256 x, __m256 y) { return _mm256_fmadd_ps(acc, x, y); },
      [](__m256 v) {
        alignas(32) float lanes[8];
        _mm256_store_ps(lanes, v);
        double s = 0;
        for (float f : lanes) s += f;
        return s;
      });
}
}  // namespace

extern const FmaChainKernel kFmaChainAvx2{8, 12, run};
#else
// Not an x86-64 build: cpu_supports() never picks this path.
extern const FmaChainKernel kFmaChainAvx2{8, 12, nullptr};
#endif

}  // namespace tunescope::cpu
