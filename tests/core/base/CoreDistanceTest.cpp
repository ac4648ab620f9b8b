// The core-distance probe (CoreDistance.h): a finite round trip between two allowed CPUs
// (or one CPU with itself), and refusals of a bad count or a CPU the process may not use.
#include "core/base/CoreDistance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/base/CpuAffinity.h"
#include "tests/core/ExpectError.h"

namespace tunescope {
namespace {

TEST(CoreDistance, MeasuresARoundTripBetweenTwoAllowedCpus) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  const int other = cpus.size() > 1 ? cpus[1] : cpus[0];
  // On one CPU the two threads take turns through the scheduler: slow but finite, so few
  // round trips.
  const double ns = cache_line_round_trip_ns(cpus[0], other, cpus.size() > 1 ? 2000 : 3);
  EXPECT_TRUE(std::isfinite(ns));
  EXPECT_GT(ns, 0);
}

TEST(CoreDistance, RefusesABadCountAndACpuOutsideTheAllowedSet) {
  const std::vector<int> cpus = allowed_cpus();
  test_support::expect_error(ErrorKind::usage,
                             [&] { cache_line_round_trip_ns(cpus[0], cpus[0], 0); },
                             {"round trips", "got 0"});
  // Either side's refusal comes back, and the other side does not wait for ever.
  test_support::expect_error(ErrorKind::runtime,
                             [&] { cache_line_round_trip_ns(cpus[0], 100000, 10); },
                             {"core-distance probe", "100000"});
  test_support::expect_error(ErrorKind::runtime,
                             [&] { cache_line_round_trip_ns(100000, cpus[0], 10); },
                             {"core-distance probe", "100000"});
}

TEST(CoreDistance, TheWatchRunsOnlyWhereTwoThreadsShareCpus) {
  EXPECT_FALSE(start_core_distance_watch(1).has_value());
  std::optional<profiler::CoreDistanceWatch> watch = start_core_distance_watch(2);
  if (allowed_cpus().size() < 2) {
    EXPECT_FALSE(watch.has_value());
    return;
  }
  ASSERT_TRUE(watch.has_value());
  EXPECT_EQ(watch->cpu_a, allowed_cpus()[0]);
  EXPECT_EQ(watch->cpu_b, allowed_cpus()[1]);
  EXPECT_GT(watch->start_ns, 0);
  EXPECT_EQ(watch->end_ns, 0);
  end_core_distance_watch(watch);
  EXPECT_GT(watch->end_ns, 0);
}

}  // namespace
}  // namespace tunescope
