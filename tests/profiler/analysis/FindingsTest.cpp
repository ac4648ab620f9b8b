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

}  // namespace
}  // namespace tunescope::profiler::analysis
