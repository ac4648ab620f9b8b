// The step-time predictor on a hand-made reference trace and hand-made find timings,
// whose answers follow from the model by hand (StepTimePredictor.h); exact up to
// floating-point rounding (1e-9 ms).
#include <gtest/gtest.h>

#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/StepTimePredictor.h"

namespace tunescope::tuner {
namespace {

using profiler::Activity;
using profiler::ActivityKind;
using profiler::Range;
using profiler::RangeCategory;

constexpr int64_t kMs = 1'000'000;

// Two 100 ms steps on lane 0. Per step: conv1 runs direct.fwd (10 ms) and, in the
// backward pass, direct.bwd_filter (10 ms) but no bwd_data (the first layer); conv2
// runs all three passes (10 + 5 + 10 ms); bias (2 ms, inside conv1's range but not the
// algorithm's), relu (5 ms) and sgd (5 ms, in conv1's update range) are the other
// kernels; the rest of the step (43 ms) is idle.
profiler::Trace reference_trace() {
  profiler::Trace trace;
  for (int step = 0; step < 2; ++step) {
    const int64_t t0 = step * 100 * kMs;
    auto range = [&](const char* name, RangeCategory category, int64_t start, int64_t end) {
      Range r;
      r.name = name;
      r.category = category;
      r.start_ns = t0 + start * kMs;
      r.end_ns = t0 + end * kMs;
      trace.ranges.push_back(r);
    };
    auto kernel = [&](const char* name, int64_t start, int64_t end) {
      Activity a;
      a.name = name;
      a.start_ns = t0 + start * kMs;
      a.end_ns = t0 + end * kMs;
      trace.activities.push_back(a);
    };
    range("train_step", RangeCategory::iteration, 0, 100);
    range("conv1", RangeCategory::layer, 0, 20);
    kernel("direct.fwd", 0, 10);
    kernel("bias.fwd", 10, 12);
    kernel("relu.fwd", 20, 25);
    range("conv2", RangeCategory::layer, 30, 60);
    kernel("direct.fwd.im2col", 30, 40);  // a step of a pass counts as the pass
    kernel("direct.bwd_data", 40, 45);
    kernel("direct.bwd_filter", 45, 55);
    range("conv1", RangeCategory::layer, 60, 80);
    kernel("direct.bwd_filter", 60, 70);
    range("conv1", RangeCategory::layer, 82, 92);
    kernel("sgd", 85, 90);
  }
  profiler::sort_by_start(trace);
  return trace;
}

AlgorithmTiming timed(const std::string& algorithm, PassTimes passes) {
  AlgorithmTiming t;
  t.algorithm = algorithm;
  t.passes = passes;
  t.median_ms = passes.fwd_ms + passes.bwd_data_ms + passes.bwd_filter_ms;
  return t;
}

std::vector<LayerFind> finds() {
  auto find = [](const char* layer, int threads, std::vector<AlgorithmTiming> timings) {
    LayerFind f;
    f.layer = layer;
    f.layout = Layout::NCHW;
    f.threads = threads;
    f.timings = std::move(timings);
    return f;
  };
  AlgorithmTiming wrong = timed("fft-own", {0.1, 0.1, 0.1});
  wrong.skip_reason = "wrong results";
  return {
      find("conv1", 1, {timed("direct", {1, 100, 2}), timed("gemm", {3, 50, 4}), wrong}),
      find("conv2", 1, {timed("direct", {5, 6, 7}), timed("gemm", {1, 1, 1})}),
      find("conv1", 2, {timed("direct", {0.5, 50, 1})}),
      find("conv2", 2, {timed("direct", {2.5, 3, 3.5}), timed("gemm", {0.5, 0.5, 0.5})}),
  };
}

RunConfig config(const std::string& conv, int threads) {
  RunConfig c;
  c.conv = parse_conv_choice(conv);
  knobs::layout.set(c.knobs, Layout::NCHW);
  knobs::threads.set(c.knobs, threads);
  return c;
}

TEST(StepTimePredictor, ProfilesTheReferenceTrace) {
  const ReferenceProfile p =
      profile_reference(reference_trace(), {"conv1", "conv2"}, "direct", Layout::NCHW, 1);
  EXPECT_EQ(p.steps, 2);
  EXPECT_NEAR(p.step_ms, 100, 1e-9);
  EXPECT_NEAR(p.conv_ms, 45, 1e-9);
  EXPECT_NEAR(p.non_conv_ms, 12, 1e-9);  // bias 2 + relu 5 + sgd 5
  EXPECT_NEAR(p.idle_ms, 43, 1e-9);
  EXPECT_EQ(p.passes.at("conv1"), (std::array<bool, 3>{true, false, true}));
  EXPECT_EQ(p.passes.at("conv2"), (std::array<bool, 3>{true, true, true}));
  EXPECT_NEAR(p.conv_layer_ms.at("conv2").bwd_data_ms, 5, 1e-9);
}

TEST(StepTimePredictor, RefusesATraceWithoutTheConvLayersKernels) {
  EXPECT_THROW(profile_reference(reference_trace(), {"conv1", "conv3"}, "direct", Layout::NCHW, 1),
               Error);
  EXPECT_THROW(profile_reference(reference_trace(), {"conv1"}, "gemm", Layout::NCHW, 1), Error);
  EXPECT_THROW(profile_reference(profiler::Trace{}, {"conv1"}, "direct", Layout::NCHW, 1), Error);
}

TEST(StepTimePredictor, AddsTheFindsPassesToTheReferencesOtherKernelsAndIdleTime) {
  const StepTimePredictor predictor(
      profile_reference(reference_trace(), {"conv1", "conv2"}, "direct", Layout::NCHW, 1), finds());
  // gemm everywhere at 1 thread: conv1 fwd + bwd_filter (3 + 4; its bwd_data 50 is not
  // run), conv2 all passes (3), other kernels 12 unscaled, idle 43.
  const StepPrediction gemm = predictor.predict(config("gemm", 1));
  ASSERT_TRUE(gemm.predicted()) << gemm.unpredictable;
  EXPECT_NEAR(gemm.conv_ms, 10, 1e-9);
  EXPECT_NEAR(gemm.non_conv_ms, 12, 1e-9);
  EXPECT_NEAR(gemm.idle_ms, 43, 1e-9);
  EXPECT_NEAR(gemm.step_ms, 65, 1e-9);
  // The reference's own config: its find timings (3 + 18) in place of the trace's 45.
  EXPECT_NEAR(predictor.predict(config("direct", 1)).step_ms, 21 + 12 + 43, 1e-9);
  // At 2 threads the find's timings of every (layer, algorithm) timed at both thread
  // counts in the reference layout halve ((1.5 + 9 + 1.5) / (3 + 18 + 3)), so the other
  // kernels scale by 0.5; conv1 direct (0.5 + 1) and conv2 gemm (1.5).
  EXPECT_NEAR(*predictor.thread_scale(2), 0.5, 1e-12);
  const StepPrediction mixed = predictor.predict(config("direct,conv2=gemm", 2));
  ASSERT_TRUE(mixed.predicted()) << mixed.unpredictable;
  EXPECT_NEAR(mixed.step_ms, 1.5 + 1.5 + 6 + 43, 1e-9);
}

TEST(StepTimePredictor, SaysWhyAConfigIsUnpredictable) {
  const StepTimePredictor predictor(
      profile_reference(reference_trace(), {"conv1", "conv2"}, "direct", Layout::NCHW, 1), finds());
  EXPECT_NE(predictor.predict(config("gemm", 2)).unpredictable.find("gemm on conv1"),
            std::string::npos);
  EXPECT_NE(predictor.predict(config("fft-own", 1)).unpredictable.find("fft-own"),
            std::string::npos);
  EXPECT_NE(predictor.predict(config("direct", 4)).unpredictable.find("4 threads"),
            std::string::npos);
  RunConfig lanes = config("direct", 1);
  knobs::streams.set(lanes.knobs, 2);
  const StepPrediction p = predictor.predict(lanes);
  EXPECT_FALSE(p.predicted());
  EXPECT_NE(p.unpredictable.find("streams"), std::string::npos);
  EXPECT_EQ(p.step_ms, 0);
}

}  // namespace
}  // namespace tunescope::tuner
