// The cpu backend's machine probe (Backend::measure_peaks): fp32 FMA throughput of
// each instruction-set path this CPU runs (FmaChainKernels.h) and STREAM-triad memory
// bandwidth, each on `threads` threads at once, best of a few repetitions; with the
// theoretical FMA peak it should approach (cores x FMA units x width x 2 x clock).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/CpuIsa.h"
#include "kernels/cpu/FmaChainKernels.h"
#include "profiler/Roofline.h"

namespace tunescope::cpu {

using profiler::kMaxProbeSeconds;
using profiler::kMaxProbeThreads;
using profiler::kMinProbeSeconds;

const FmaChainKernel& fma_chain_kernel(CpuIsa isa);

// Best GFLOP/s of `isa`'s kernel on `threads` threads over about `seconds`.
double measure_fma_gflops(CpuIsa isa, int threads, double seconds);
// Best STREAM triad (a = b + s c) GB/s on `threads` threads over about `seconds`, on
// arrays of `array_bytes` each (counted as 3 x array_bytes per pass, as STREAM does).
double measure_triad_gbs(int threads, size_t array_bytes, double seconds);
// Bytes per triad array: four times the largest cache (so the arrays stream from
// memory), at least 32 MiB and at most 512 MiB.
size_t triad_array_bytes();

// The theoretical FMA peak of `isa` on `threads` threads and how it was reckoned; 0
// when the clock is unknown.
struct TheoreticalPeak {
  double gflops = 0;
  std::string basis;
};
TheoreticalPeak theoretical_fma_peak(CpuIsa isa, int threads);

// Every path this CPU runs, with the one bandwidth figure. Throws Error(usage) naming
// the bound for threads outside 1..kMaxProbeThreads or seconds outside
// kMinProbeSeconds..kMaxProbeSeconds.
std::vector<profiler::MachinePeak> measure_cpu_peaks(int threads, double seconds);

}  // namespace tunescope::cpu
