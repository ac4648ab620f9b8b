// The core-distance watch's data (profiler/CoreDistanceProbes.h): when two probes are of
// two states, what the watch says then, its trace-metadata text both ways, and whether
// two runs' watches saw the CPUs in different states.
#include "profiler/CoreDistanceProbes.h"

#include <gtest/gtest.h>

namespace tunescope::profiler {
namespace {

CoreDistanceWatch watch_of(double start_ns, double end_ns) {
  CoreDistanceWatch watch;
  watch.cpu_a = 0;
  watch.cpu_b = 1;
  watch.start_ns = start_ns;
  watch.end_ns = end_ns;
  return watch;
}

TEST(CoreDistanceProbes, TheWatchSaysWhenTheHostMovedTheCpus) {
  CoreDistanceWatch watch = watch_of(190, 0);
  EXPECT_FALSE(watch.moved()) << "not probed at the end yet";
  watch.end_ns = 330;  // 1.74x: within the same state
  EXPECT_FALSE(watch.moved());
  EXPECT_NE(watch.describe("tune").find("190 ns when the tune started and 330 ns when it ended"),
            std::string::npos)
      << watch.describe("tune");
  watch.end_ns = 585;  // 3.1x: far apart at the end
  EXPECT_TRUE(watch.moved());
  EXPECT_NE(watch.describe("run").find("farther apart during the run"), std::string::npos)
      << watch.describe("run");
  std::swap(watch.start_ns, watch.end_ns);
  EXPECT_TRUE(watch.moved());
  EXPECT_NE(watch.describe("tune").find("closer together"), std::string::npos)
      << watch.describe("tune");
}

TEST(CoreDistanceProbes, MetadataTextRoundTripsAndRefusesOtherText) {
  CoreDistanceWatch watch = watch_of(183.4, 590.6);
  watch.cpu_a = 2;
  watch.cpu_b = 5;
  EXPECT_EQ(core_distance_to_text(watch), "2 5 183 591");
  const auto back = core_distance_from_text("2 5 183 591");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->cpu_a, 2);
  EXPECT_EQ(back->cpu_b, 5);
  EXPECT_DOUBLE_EQ(back->start_ns, 183);
  EXPECT_DOUBLE_EQ(back->end_ns, 591);
  for (const char* bad :
       {"", "0 1 183", "0 1 183 x", "0 1 183 190 7", "-1 1 183 190", "0 1 0 190", "0 1 183 -4"})
    EXPECT_FALSE(core_distance_from_text(bad).has_value()) << '"' << bad << '"';
}

TEST(CoreDistanceProbes, TwoRunsInTheSameStateOrInTwo) {
  // Near runs at 110-270 ns, far ones at 440-605 ns (the 2-vCPU VMs).
  EXPECT_FALSE(different_core_states(watch_of(150, 190), watch_of(170, 205)));
  EXPECT_FALSE(different_core_states(watch_of(480, 520), watch_of(450, 605)));
  EXPECT_TRUE(different_core_states(watch_of(150, 190), watch_of(480, 520)));
  // A run that started near and ended far is in another state than a near one.
  EXPECT_TRUE(different_core_states(watch_of(150, 560), watch_of(160, 170)));
  // One not probed at its end yet counts its start only.
  EXPECT_FALSE(different_core_states(watch_of(150, 0), watch_of(160, 170)));
}

}  // namespace
}  // namespace tunescope::profiler
