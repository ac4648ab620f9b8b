// The machine probe: every FMA-chain path this CPU runs computes what its flop count
// claims (the chains' values against a double-precision reference of the same
// recurrence), the triad arrays are sized within their bounds, the probe's options are
// checked before anything runs, and each path and the bandwidth yield a figure. No
// time is asserted (performance goes to bench/ and docs/BENCHMARKS.md).
#include <gtest/gtest.h>

#include <cmath>

#include "core/base/Error.h"
#include "kernels/cpu/PeakProbe.h"

namespace tunescope::cpu {
namespace {

// Sum over chains and lanes of acc_{n} = a acc_{n-1} + b with acc_0 = start + chain.
double reference(const FmaChainKernel& k, int64_t iterations, double a, double b, double start) {
  double total = 0;
  for (int chain = 0; chain < k.chains; ++chain) {
    double acc = start + chain;
    for (int64_t i = 0; i < iterations; ++i) acc = acc * a + b;
    total += k.lanes * acc;
  }
  return total;
}

TEST(FmaChains, EveryPathComputesTheRecurrence) {
  for (CpuIsa isa : supported_cpu_isas()) {
    const FmaChainKernel& k = fma_chain_kernel(isa);
    ASSERT_NE(k.run, nullptr) << to_string(isa);
    for (int64_t iterations : {1, 7, 1000}) {
      const float a = 0.999f, b = 0.001f, start = 1.5f;
      const double want = reference(k, iterations, a, b, start);
      // float chains of a contraction: each step's rounding (<= 2^-24 relative, two per
      // step without FMA) shrinks by a at the next, so the error stays near 1e-6 relative.
      EXPECT_NEAR(k.run(iterations, a, b, start), want, 1e-5 * std::abs(want))
          << to_string(isa) << ", " << iterations << " iterations";
    }
    EXPECT_DOUBLE_EQ(k.flops(10), 2.0 * k.lanes * k.chains * 10);
  }
}

TEST(FmaChains, WidthsMatchTheirInstructionSets) {
  EXPECT_EQ(fma_chain_kernel(CpuIsa::scalar).lanes, 1);
  EXPECT_EQ(fma_chain_kernel(CpuIsa::avx2).lanes, 8);
  EXPECT_EQ(fma_chain_kernel(CpuIsa::avx512).lanes, 16);
}

TEST(PeakProbe, EveryPathAndTheBandwidthYieldAFigure) {
  for (CpuIsa isa : supported_cpu_isas())
    EXPECT_GT(measure_fma_gflops(isa, 1, 0.05), 0) << to_string(isa);
  EXPECT_GT(measure_triad_gbs(2, size_t{4} << 20, 0.02), 0);
  const size_t bytes = triad_array_bytes();
  EXPECT_GE(bytes, size_t{32} << 20);
  EXPECT_LE(bytes, size_t{512} << 20);
}

TEST(PeakProbe, RefusesAPathThisCpuLacks) {
  for (CpuIsa isa : {CpuIsa::avx2, CpuIsa::avx512}) {
    if (!cpu_supports(isa)) {
      EXPECT_THROW(measure_fma_gflops(isa, 1, 0.05), Error);
    }
  }
}

TEST(PeakProbe, ChecksItsBoundsBeforeRunning) {
  for (auto [threads, seconds] :
       {std::pair{0, 1.0}, {kMaxProbeThreads + 1, 1.0}, {1, 0.0}, {1, 1e9}}) {
    try {
      measure_cpu_peaks(threads, seconds);
      ADD_FAILURE() << threads << " threads, " << seconds << " s accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage) << e.what();
    }
  }
}

TEST(PeakProbe, TheoreticalPeakSaysHowItWasReckoned) {
  const TheoreticalPeak peak = theoretical_fma_peak(supported_cpu_isas().back(), 1);
  if (peak.gflops == 0) GTEST_SKIP() << "no cpu MHz in /proc/cpuinfo";
  EXPECT_NE(peak.basis.find("x 2 x"), std::string::npos) << peak.basis;
  EXPECT_NE(peak.basis.find("GHz"), std::string::npos) << peak.basis;
}

}  // namespace
}  // namespace tunescope::cpu
