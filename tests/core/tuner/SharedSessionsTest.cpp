// Interleaved rounds with MeasureOptions::share_sessions: members that differ only in
// conv algorithms take their turns one after another in one session, only a turn after
// another session's settles, and each member's figures and trace are its own turns'.
#include <gtest/gtest.h>

#include <string>

#include "TestAlgorithms.h"
#include "core/tuner/Measurement.h"
#include "core/tuner/TrialRunner.h"

namespace tunescope::tuner {
namespace {

using test_support::config_with;

// `rounds` rounds (never settled earlier), one settle step a turn wherever a turn settles.
MeasureOptions rounds_settling_each_turn(int64_t rounds, bool share_sessions) {
  MeasureOptions o;
  o.steps = 2;
  o.max_steps = rounds;
  o.settle_steps = 1;
  o.settle_until_negligible = false;
  o.share_sessions = share_sessions;
  return o;
}

size_t count_ranges(const profiler::Trace& trace, profiler::RangeCategory category) {
  size_t n = 0;
  for (const auto& range : trace.ranges) n += range.category == category;
  return n;
}

bool has_kernel_of(const profiler::Trace& trace, const std::string& algorithm) {
  for (const auto& activity : trace.activities)
    if (activity.name.str().rfind(algorithm + ".", 0) == 0) return true;
  return false;
}

// nchw direct and nchw gemm share a session, nhwc gemm has its own, so a round's turns
// go nchw direct (settles: the turn before was nhwc gemm's), nchw gemm (does not), nhwc
// gemm (settles). Each member's trace holds its own turns only: its candidate ranges,
// its steps (settle steps included) and its algorithm's kernels, not its session
// partner's.
TEST(SharedSessions, OnlyATurnAfterAnotherSessionsSettles) {
  const SessionOptions base = test_support::tiny_session();
  const MeasureOptions o = rounds_settling_each_turn(7, true);
  const NumericsSample reference = reference_numerics(base, o);
  const std::vector<RunConfig> configs{config_with(base, Layout::NCHW, "direct"),
                                       config_with(base, Layout::NHWC, "gemm"),
                                       config_with(base, Layout::NCHW, "gemm")};
  const auto results =
      measure_interleaved(base, configs, {&reference, &reference, &reference}, o,
                          [](const std::vector<std::vector<double>>&) { return false; });
  ASSERT_EQ(results.size(), 3u);
  const size_t settles[] = {1, 1, 0};  // per member, settle steps a turn
  const char* algorithms[] = {"direct", "gemm", "gemm"};
  for (size_t i = 0; i < results.size(); ++i) {
    const TrialResult& r = results[i];
    ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
    EXPECT_EQ(r.config, configs[i]);
    EXPECT_EQ(r.figures.steps, 7);
    ASSERT_TRUE(r.trace);
    EXPECT_EQ(count_ranges(*r.trace, profiler::RangeCategory::candidate), 7u) << r.config.label();
    EXPECT_EQ(count_ranges(*r.trace, profiler::RangeCategory::iteration), 7 * (1 + settles[i]))
        << r.config.label();
    for (const auto& range : r.trace->ranges) {
      if (range.category == profiler::RangeCategory::candidate) {
        EXPECT_EQ(range.name, r.config.label());
      }
    }
    EXPECT_TRUE(has_kernel_of(*r.trace, algorithms[i])) << r.config.label();
    EXPECT_EQ(r.trace->metadata.extra.at("candidate"), r.config.label());
  }
  EXPECT_FALSE(has_kernel_of(*results[0].trace, "gemm")) << "its session partner's kernels";
  EXPECT_FALSE(has_kernel_of(*results[2].trace, "direct")) << "its session partner's kernels";
}

// Without share_sessions every member has its own session and every turn settles.
TEST(SharedSessions, OffEveryTurnSettles) {
  const SessionOptions base = test_support::tiny_session();
  const MeasureOptions o = rounds_settling_each_turn(6, false);
  const NumericsSample reference = reference_numerics(base, o);
  const std::vector<RunConfig> configs{config_with(base, Layout::NCHW, "direct"),
                                       config_with(base, Layout::NCHW, "gemm")};
  const auto results =
      measure_interleaved(base, configs, {&reference, &reference}, o,
                          [](const std::vector<std::vector<double>>&) { return false; });
  for (const TrialResult& r : results) {
    ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
    EXPECT_EQ(count_ranges(*r.trace, profiler::RangeCategory::iteration), 6u * 2);
  }
}

}  // namespace
}  // namespace tunescope::tuner
