// The pool's spin before it sleeps (SpinBudget.h): /proc/loadavg's running count read and
// refused when malformed, the crowding average's arithmetic and threshold, and the live
// budget turning short while more threads run than the machine has CPUs.
#include "core/base/SpinBudget.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tunescope {
namespace {

TEST(SpinBudget, ReadsTheRunningCountOfLoadavg) {
  EXPECT_EQ(parse_running_threads("0.52 0.58 0.59 2/467 12345\n"), 2);
  EXPECT_EQ(parse_running_threads("12.00 9.10 3.00 17/1024 1"), 17);
  EXPECT_EQ(parse_running_threads(""), std::nullopt);
  EXPECT_EQ(parse_running_threads("0.52 0.58 0.59"), std::nullopt);
  EXPECT_EQ(parse_running_threads("0.52 0.58 0.59 x/467 1"), std::nullopt);
  EXPECT_EQ(parse_running_threads("0.52 0.58 0.59 2 467"), std::nullopt);
  EXPECT_EQ(parse_running_threads("0.52 0.58 0.59 -2/467 1"), std::nullopt);
}

TEST(SpinBudget, CrowdingAveragesTheThreadsBeyondTheCpus) {
  // No excess keeps it at 0; each sample moves it a tenth of the way to the excess.
  EXPECT_DOUBLE_EQ(next_crowding(0, 2, 2), 0);
  EXPECT_DOUBLE_EQ(next_crowding(0, 1, 2), 0);
  EXPECT_DOUBLE_EQ(next_crowding(0, 3, 2), 0.1);
  EXPECT_DOUBLE_EQ(next_crowding(1, 2, 2), 0.9);
  EXPECT_DOUBLE_EQ(next_crowding(0.5, 6, 2), 0.85);
}

TEST(SpinBudget, AStrayThreadKeepsTheLongSpinAndSteadyCrowdingShortensIt) {
  // One sample in twenty catching a short-lived extra thread stays below the threshold.
  double crowding = 0;
  for (int sample = 0; sample < 200; ++sample)
    crowding = next_crowding(crowding, sample % 20 == 0 ? 3 : 2, 2);
  EXPECT_EQ(spin_pauses_for(crowding), kLongSpinPauses);
  // A busy process beside two of our threads on two CPUs, in most samples: short within a
  // handful of samples (tens of milliseconds).
  int samples = 0;
  while (spin_pauses_for(crowding) == kLongSpinPauses && samples < 100) {
    crowding = next_crowding(crowding, samples % 4 == 0 ? 2 : 3, 2);
    ++samples;
  }
  EXPECT_EQ(spin_pauses_for(crowding), kShortSpinPauses);
  EXPECT_LE(samples, 12);
}

TEST(SpinBudget, ThreadsBeyondTheCpusShortenTheLiveSpin) {
  // More spinning threads than the machine has CPUs: /proc/loadavg counts them running, so
  // within about a second of 10 ms samples the budget is the short one.
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  ASSERT_GT(cpus, 0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (long i = 0; i < cpus + 2; ++i)
    spinners.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int pauses = spin_pauses_now();
  while (pauses != kShortSpinPauses && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    pauses = spin_pauses_now();
  }
  stop = true;
  for (std::thread& spinner : spinners) spinner.join();
  EXPECT_EQ(pauses, kShortSpinPauses);
}

}  // namespace
}  // namespace tunescope
