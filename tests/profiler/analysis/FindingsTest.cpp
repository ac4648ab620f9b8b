// Findings on a hand-built padding-heavy step: the padding kernel is named first with
// the gain its removal gives in the replay, the update on the critical path is found
// unless the config already overlaps it.
#include <gtest/gtest.h>

#include <algorithm>

#include "profiler/analysis/Findings.h"

namespace tunescope::profiler::analysis {
namespace {

Trace padding_heavy_step(const std::string& config) {
  // One lane, step [0,100]: pad [0,40], direct.fwd [40,60], sgd [60,80]; the host ends
  // the step 20 after the last kernel.
  Trace t;
  t.metadata.config = config;
  const auto add = [&](const char* name, int64_t start, int64_t end) {
    Activity a;
    a.name = name;
    a.start_ns = start;
    a.end_ns = end;
    t.activities.push_back(a);
  };
  add("pad", 0, 40);
  add("direct.fwd", 40, 60);
  add("sgd", 60, 80);
  Range step;
  step.name = "train_step";
  step.category = RangeCategory::iteration;
  step.end_ns = 100;
  t.ranges = {step};
  sort_by_start(t);
  return t;
}

const Finding* find(const std::vector<Finding>& findings, const std::string& rule) {
  const auto it = std::find_if(findings.begin(), findings.end(),
                               [&](const Finding& f) { return f.rule == rule; });
  return it == findings.end() ? nullptr : &*it;
}

TEST(FindingsTest, PaddingIsNamedFirstWithTheGainOfItsRemoval) {
  const Trace t = padding_heavy_step(R"({"async_update":false})");
  const auto findings = find_findings(t, analyze(t));
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].rule, "data-movement");
  EXPECT_EQ(findings[0].evidence, (std::vector<std::string>{"pad"}));
  EXPECT_EQ(findings[0].gain_ns, 40);  // without pad the kernels end at 40, the step at 60
  EXPECT_FALSE(findings[0].gain_is_bound);
  EXPECT_EQ(findings[0].window_end_ns - findings[0].window_start_ns, 100);

  const Finding* update = find(findings, "update-on-path");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->gain_ns, 20);
  EXPECT_NE(update->suggestion.find("--async-update"), std::string::npos);
  const Finding* tail = find(findings, "lane-gaps");
  ASSERT_NE(tail, nullptr);
  EXPECT_EQ(tail->gain_ns, 20);  // the host's wait after the last kernel
  for (size_t i = 1; i < findings.size(); ++i)
    EXPECT_GE(findings[i - 1].gain_ns, findings[i].gain_ns);
}

TEST(FindingsTest, AnUpdateAlreadyOverlappedIsNotAFinding) {
  const Trace t = padding_heavy_step(R"({"async_update":true})");
  EXPECT_EQ(find(find_findings(t, analyze(t)), "update-on-path"), nullptr);
}

// One lane, step [0,200]: conv1's forward (direct.fwd [0,100], 1000 flops: 10 GFLOP/s)
// then relu.fwd [100,150]; the host ends the step at 200.
Trace conv_step() {
  Trace t;
  const auto add = [&](const char* name, int64_t start, int64_t end) {
    Activity a;
    a.name = name;
    a.start_ns = start;
    a.end_ns = end;
    t.activities.push_back(a);
  };
  add("direct.fwd", 0, 100);
  add("relu.fwd", 100, 150);
  Range step, layer;
  step.name = "train_step", step.category = RangeCategory::iteration, step.end_ns = 200;
  layer.name = "conv1", layer.category = RangeCategory::layer, layer.end_ns = 100;
  t.ranges = {step, layer};
  t.metadata.extra[kConvLayersKey] = conv_layers_to_json({{"conv1", "direct", "p", 1000, 0}});
  sort_by_start(t);
  return t;
}

TEST(FindingsTest, AConvPassFarBelowTheRooflineIsReplayedAtHalfTheRoof) {
  const Trace t = conv_step();
  MachinePeak peak;
  peak.fma_gflops = 100;  // 10 GFLOP/s is 10 %: far below (under 25 %)
  const auto findings = find_findings(t, analyze(t), peak);
  const Finding* roofline = find(findings, "below-roofline");
  ASSERT_NE(roofline, nullptr);
  // At half the roof (50 GFLOP/s) the pass takes 20 instead of 100: the step saves 80.
  EXPECT_EQ(roofline->gain_ns, 80);
  EXPECT_FALSE(roofline->gain_is_bound);
  EXPECT_EQ(roofline->evidence, (std::vector<std::string>{"direct.fwd"}));
  EXPECT_NE(roofline->summary.find("conv1 fwd"), std::string::npos) << roofline->summary;

  // Memory-bound: intensity 0.5 FLOP/B (2000 bytes) x 100 GB/s = a 50 GFLOP/s roof; at
  // half of it (25) the pass takes 40: saves 60.
  Trace memory = conv_step();
  memory.metadata.extra[kConvLayersKey] =
      conv_layers_to_json({{"conv1", "direct", "p", 1000, 2000}});
  peak.bandwidth_gbs = 100;
  const auto memory_findings = find_findings(memory, analyze(memory), peak);
  const Finding* bound = find(memory_findings, "below-roofline");
  ASSERT_NE(bound, nullptr);
  EXPECT_EQ(bound->gain_ns, 60);
  EXPECT_NE(bound->summary.find("memory-bound"), std::string::npos) << bound->summary;
}

TEST(FindingsTest, NoRooflineFindingWithoutAPeakOrNearTheRoof) {
  const Trace t = conv_step();
  EXPECT_EQ(find(find_findings(t, analyze(t)), "below-roofline"), nullptr);
  MachinePeak peak;
  peak.fma_gflops = 30;  // 10 GFLOP/s is a third of it: not far below
  EXPECT_EQ(find(find_findings(t, analyze(t), peak), "below-roofline"), nullptr);
}

}  // namespace
}  // namespace tunescope::profiler::analysis
