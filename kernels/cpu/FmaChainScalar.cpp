// The FMA-peak probe's scalar fallback: plain float multiply and add, built for the
// x86-64 baseline without vectorisation (CMakeLists.txt), so it measures one float per
// instruction on any CPU.
#include "kernels/cpu/FmaChainKernels.h"

namespace tunescope::cpu {

namespace {
double run(int64_t iterations, float a, float b, float start) {
  return run_fma_chains<float, 12>(
      iterations, a, b, start, [](float x) { return x; },
      [](float acc, float x, float y) { return acc * x + y; },
      [](float x) { return static_cast<double>(x); });
}
}  // namespace

extern const FmaChainKernel kFmaChainScalar{1, 12, run};

}  // namespace tunescope::cpu
