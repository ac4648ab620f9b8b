// The conv roofline of a hand-made trace: which kernels make a pass, how calls, times and
// effective GFLOP/s add up, the per-kernel pass rate, the metadata round trip, the peak
// lookup and the table with and without a peak.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

#include "profiler/MetricsReport.h"
#include "profiler/Roofline.h"

namespace tunescope::profiler {
namespace {

Activity kernel(const char* name, int lane, int64_t start, int64_t end) {
  Activity a;
  a.name = name;
  a.stream = lane;
  a.start_ns = start;
  a.end_ns = end;
  return a;
}

Range layer(const char* name, int lane, int64_t start, int64_t end) {
  Range r;
  r.name = name;
  r.category = RangeCategory::layer;
  r.start_ns = start;
  r.end_ns = end;
  r.lane = lane;
  return r;
}

// conv1 (gemm, 1000 flops per pass, 100 bytes) and conv2 (direct, 4000 flops, 1000 bytes).
std::vector<ConvLayerInfo> layers() {
  return {{"conv1", "gemm", "p1", 1000, 100}, {"conv2", "direct", "p2", 4000, 1000}};
}

Trace hand_made_trace() {
  Trace t;
  // Two forward calls of conv1 on lanes 0 and 1: im2col + sgemm (a pass of two kernels).
  t.ranges.push_back(layer("conv1", 0, 0, 100));
  t.activities.push_back(kernel("gemm.fwd.im2col", 0, 0, 10));
  t.activities.push_back(kernel("gemm.fwd.sgemm", 0, 10, 50));
  t.ranges.push_back(layer("conv1", 1, 0, 100));
  t.activities.push_back(kernel("gemm.fwd.sgemm", 1, 5, 55));
  // Not conv1's: another algorithm's name, a bias kernel, a kernel outside any range.
  t.activities.push_back(kernel("direct.fwd", 0, 60, 70));
  t.activities.push_back(kernel("bias.fwd", 0, 70, 80));
  t.activities.push_back(kernel("gemm.fwd.sgemm", 0, 150, 190));
  // conv1's backward range: both backward passes.
  t.ranges.push_back(layer("conv1", 0, 200, 400));
  t.activities.push_back(kernel("gemm.bwd_data.sgemm", 0, 200, 300));
  t.activities.push_back(kernel("gemm.bwd_data.col2im", 0, 300, 320));
  t.activities.push_back(kernel("gemm.bwd_filter.sgemm", 0, 320, 400));
  // conv2 forward; a range of another category does not count.
  t.ranges.push_back(layer("conv2", 0, 500, 600));
  t.activities.push_back(kernel("direct.fwd", 0, 500, 540));
  Range phase = layer("conv2", 0, 700, 800);
  phase.category = RangeCategory::phase;
  t.ranges.push_back(phase);
  t.activities.push_back(kernel("direct.fwd", 0, 700, 790));
  sort_by_start(t);
  return t;
}

TEST(ConvPassRates, SumThePassKernelsOfEachLayerCall) {
  const auto rates = conv_pass_rates(hand_made_trace(), layers());
  ASSERT_EQ(rates.size(), 4u);
  // conv1 fwd: 2 calls, 10 + 40 + 50 ns for 2 x 1000 flops = 20 GFLOP/s (flop per ns).
  EXPECT_EQ(rates[0].layer, "conv1");
  EXPECT_EQ(rates[0].pass, "fwd");
  EXPECT_EQ(rates[0].calls, 2u);
  EXPECT_EQ(rates[0].total_ns, 100);
  EXPECT_DOUBLE_EQ(rates[0].flops, 2000);
  EXPECT_DOUBLE_EQ(rates[0].gflops, 20);
  EXPECT_DOUBLE_EQ(rates[0].intensity, 10);
  // bwd_data: sgemm + col2im, 120 ns for 1000 flops.
  EXPECT_EQ(rates[1].pass, "bwd_data");
  EXPECT_EQ(rates[1].calls, 1u);
  EXPECT_EQ(rates[1].total_ns, 120);
  EXPECT_DOUBLE_EQ(rates[1].gflops, 1000.0 / 120);
  EXPECT_EQ(rates[2].pass, "bwd_filter");
  EXPECT_EQ(rates[2].total_ns, 80);
  EXPECT_DOUBLE_EQ(rates[2].gflops, 12.5);
  // conv2: only the kernel inside its layer range: 4000 flops in 40 ns.
  EXPECT_EQ(rates[3].layer, "conv2");
  EXPECT_EQ(rates[3].algorithm, "direct");
  EXPECT_EQ(rates[3].calls, 1u);
  EXPECT_DOUBLE_EQ(rates[3].gflops, 100);
  EXPECT_DOUBLE_EQ(rates[3].intensity, 4);
}

TEST(ConvPassRates, NothingWithoutConvLayers) {
  EXPECT_TRUE(conv_pass_rates(hand_made_trace(), {}).empty());
  EXPECT_TRUE(kernel_pass_rates(hand_made_trace(), {}).empty());
}

TEST(KernelPassRates, EveryKernelOfAPassShowsItsPassRate) {
  const auto rates = kernel_pass_rates(hand_made_trace(), layers());
  std::map<std::string, double> by_name;
  for (const auto& r : rates) by_name[r.name] = r.gflops;
  ASSERT_EQ(by_name.size(),
            6u);  // im2col, fwd sgemm, bwd_data sgemm, col2im, bwd_filter sgemm, direct.fwd
  // Lane 0's forward pass: 1000 flops in 50 ns (20/ns) for im2col and its sgemm; lane 1's
  // sgemm alone: 1000 in 50 ns. So the fwd sgemm: (800 + 1000) flops over 90 ns.
  EXPECT_DOUBLE_EQ(by_name["gemm.fwd.im2col"], 20);
  EXPECT_DOUBLE_EQ(by_name["gemm.fwd.sgemm"], 1800.0 / 90);
  EXPECT_DOUBLE_EQ(by_name["gemm.bwd_data.sgemm"], 1000.0 / 120);
  EXPECT_DOUBLE_EQ(by_name["gemm.bwd_data.col2im"], 1000.0 / 120);
  EXPECT_DOUBLE_EQ(by_name["direct.fwd"], 100);
}

TEST(ConvLayersMetadata, RoundTripsThroughJson) {
  TraceMetadata m;
  m.extra[kConvLayersKey] = conv_layers_to_json(layers());
  const auto back = conv_layers_of(m);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].layer, "conv2");
  EXPECT_EQ(back[1].algorithm, "direct");
  EXPECT_EQ(back[1].problem, "p2");
  EXPECT_DOUBLE_EQ(back[1].flops_per_pass, 4000);
  EXPECT_DOUBLE_EQ(back[1].min_bytes_per_pass, 1000);
  EXPECT_TRUE(conv_layers_of(TraceMetadata{}).empty());
}

TEST(ConvLayersMetadata, BadEntryNamesTheKey) {
  TraceMetadata m;
  for (const char* bad : {"not json", R"([{"layer":"c"}])",
                          R"([{"layer":"c","algorithm":"a","flops_per_pass":-1}])"}) {
    m.extra[kConvLayersKey] = bad;
    try {
      conv_layers_of(m);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(kConvLayersKey), std::string::npos) << e.what();
    }
  }
}

MachinePeak peak(const char* isa, int threads, double gflops) {
  MachinePeak p;
  p.cpu = "Test CPU";
  p.isa = isa;
  p.threads = threads;
  p.fma_gflops = gflops;
  p.bandwidth_gbs = 10;
  p.measured_at = "2026-12-04T00:00:00Z";
  return p;
}

TEST(MachinePeakFor, TakesTheWidestPathOfThatCpuAndThreadCount) {
  const std::vector<MachinePeak> peaks{peak("scalar", 2, 5), peak("avx512", 2, 80),
                                       peak("avx2", 2, 60), peak("avx512", 1, 40)};
  EXPECT_EQ(machine_peak_for(peaks, "Test CPU", 2)->isa, "avx512");
  EXPECT_DOUBLE_EQ(machine_peak_for(peaks, "Test CPU", 1)->fma_gflops, 40);
  EXPECT_FALSE(machine_peak_for(peaks, "Test CPU", 4));
  EXPECT_FALSE(machine_peak_for(peaks, "Other CPU", 2));
  EXPECT_DOUBLE_EQ(ridge_intensity(peaks[1]), 8);
}

TEST(ConvRooflineTable, WithAPeakShowsShareAndBound) {
  const auto rates = conv_pass_rates(hand_made_trace(), layers());
  // 40 GFLOP/s over 10 GB/s: ridge at 4 FLOP/B; conv1 (10 FLOP/B) is compute-bound,
  // conv2 (4 FLOP/B) sits on the ridge, which counts as compute.
  const std::string with = format_conv_roofline(rates, peak("avx2", 2, 40));
  EXPECT_NE(with.find("% peak"), std::string::npos) << with;
  EXPECT_NE(with.find("50.0"), std::string::npos) << with;   // conv1 fwd: 20 of 40
  EXPECT_NE(with.find("250.0"), std::string::npos) << with;  // conv2: 100 of 40
  EXPECT_NE(with.find("compute"), std::string::npos) << with;
  EXPECT_EQ(with.find("memory"), std::string::npos) << with;
  const std::string memory_bound = format_conv_roofline(rates, peak("avx2", 2, 200));  // ridge 20
  EXPECT_NE(memory_bound.find("memory"), std::string::npos) << memory_bound;

  const std::string without = format_conv_roofline(rates, std::nullopt);
  EXPECT_EQ(without.find("% peak"), std::string::npos) << without;
  EXPECT_EQ(without.find("compute"), std::string::npos) << without;
  EXPECT_NE(without.find("20.0"), std::string::npos) << without;
}

TEST(MachinePeakLine, SaysNotMeasuredRatherThanAFigure) {
  EXPECT_EQ(format_machine_peak(std::nullopt, "no DB"), "machine peak: not measured (no DB)\n");
  MachinePeak p = peak("avx512", 2, 150);
  p.theoretical_gflops = 166.2;
  p.theoretical_basis = "basis";
  const std::string line = format_machine_peak(p, "");
  EXPECT_NE(line.find("150.0 GFLOP/s fp32 FMA (avx512, 2 threads)"), std::string::npos) << line;
  EXPECT_NE(line.find("memory 10.0 GB/s, ridge 15.0 FLOP/B"), std::string::npos) << line;
  EXPECT_NE(line.find("theoretical 166.2 GFLOP/s (basis)"), std::string::npos) << line;
}

}  // namespace
}  // namespace tunescope::profiler
