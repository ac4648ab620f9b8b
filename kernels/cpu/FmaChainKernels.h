// The FMA-peak probe's kernels (PeakProbe.cpp), one per instruction set, each in its
// own file with its own -march (CMakeLists.txt): `chains` independent multiply-add
// chains, enough to keep every FMA pipe busy through the instruction's latency (4-5
// cycles x 2 pipes on current x86 cores), updated `iterations` times.
#pragma once

#include <cstdint>

namespace tunescope::cpu {

struct FmaChainKernel {
  int lanes = 1;   // floats per vector
  int chains = 1;  // independent accumulators
  // acc_i = acc_i * a + b for every chain, `iterations` times, with acc_i starting at
  // start + i; returns the sum of every lane of every chain (so no chain is dead code).
  // a, b and start are run-time values, so the compiler cannot fold the chains.
  double (*run)(int64_t iterations, float a, float b, float start) = nullptr;
  double flops(int64_t iterations) const {
    return 2.0 * lanes * chains * static_cast<double>(iterations);
  }
};

extern const FmaChainKernel kFmaChainScalar;  // mul + add (x86-64 baseline has no FMA)
extern const FmaChainKernel kFmaChainAvx2;    // 256-bit vfmadd
extern const FmaChainKernel kFmaChainAvx512;  // 512-bit vfmadd

// The chains as a template over a vector type and its multiply-add: included only by
// the per-instruction-set files. The constant-bound inner loop unrolls fully, so the
// accumulators live in registers.
template <class Vec, int Chains, class Splat, class MulAdd, class Sum>
double run_fma_chains(int64_t iterations, float a, float b, float start, Splat splat,
                      MulAdd mul_add, Sum sum) {
  Vec acc[Chains];
#pragma GCC unroll 32
  for (int i = 0; i < Chains; ++i) acc[i] = splat(start + static_cast<float>(i));
  const Vec va = splat(a), vb = splat(b);
  for (int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < Chains; ++i) acc[i] = mul_add(acc[i], va, vb);
  }
  double total = 0;
  for (int i = 0; i < Chains; ++i) total += sum(acc[i]);
  return total;
}

}  // namespace tunescope::cpu
