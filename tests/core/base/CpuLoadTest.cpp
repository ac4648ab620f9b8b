// CPU time of the machine and of this process (CpuLoad.h): /proc/stat's per-CPU lines
// read for a chosen set of CPUs, refusals of a malformed or missing line, and the
// process clock counting CPU burnt, not time slept.
#include "core/base/CpuLoad.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/base/CpuAffinity.h"
#include "tests/core/ExpectError.h"

namespace tunescope {
namespace {

// Fields: user nice system idle iowait irq softirq steal guest guest_nice.
constexpr const char* kProcStat =
    "cpu  500 0 100 900 20 0 0 0 0 0\n"
    "cpu0 100 0 50 400 10 0 0 0 0 0\n"
    "cpu1 400 0 50 500 10 0 0 40 7 0\n"
    "intr 12345 0 0\n"
    "ctxt 999\n";

TEST(CpuLoad, ReadsOnlyTheChosenCpusLinesAndCountsStealAsBusy) {
  const CpuTimes one = parse_proc_stat(kProcStat, {1}, 100);
  // cpu1: total 400+50+500+10+40 = 1000 ticks; busy = total - idle - iowait = 490 (steal in).
  EXPECT_DOUBLE_EQ(one.total_seconds, 10.0);
  EXPECT_DOUBLE_EQ(one.busy_seconds, 4.9);
  const CpuTimes both = parse_proc_stat(kProcStat, {0, 1}, 100);
  EXPECT_DOUBLE_EQ(both.total_seconds, 10.0 + 5.6);
  EXPECT_DOUBLE_EQ(both.busy_seconds, 4.9 + 1.5);
}

TEST(CpuLoad, RefusesAMissingOrMalformedCpuLineNamingProcStat) {
  test_support::expect_error(ErrorKind::runtime,
                             [] {
                               parse_proc_stat(kProcStat, {0, 2}, 100);
                             },
                             {"/proc/stat", "cpu2"});
  test_support::expect_error(ErrorKind::runtime,
                             [] { parse_proc_stat("cpu0 1 2 x 4 5 6 7 8\n", {0}, 100); },
                             {"/proc/stat", "cpu0", "malformed"});
  test_support::expect_error(ErrorKind::runtime, [] { parse_proc_stat("cpu0 1 2 3\n", {0}, 100); },
                             {"/proc/stat", "cpu0"});
}

TEST(CpuLoad, TheMachinesTicksCoverItsCpusForTheTimeThatPassed) {
  const std::vector<int> cpus = allowed_cpus();
  const CpuTimes before = cpu_times(cpus);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const CpuTimes after = cpu_times(cpus);
  const double span =
      (after.total_seconds - before.total_seconds) / static_cast<double>(cpus.size());
  // Ticks of 10 ms (USER_HZ 100): 0.3 s within a few ticks, whatever else runs.
  EXPECT_NEAR(span, 0.3, 0.06);
  EXPECT_GE(after.busy_seconds, before.busy_seconds);
  EXPECT_LE(after.busy_seconds - before.busy_seconds, after.total_seconds - before.total_seconds);
}

TEST(CpuLoad, TheProcessClockCountsCpuBurntNotTimeSlept) {
  const double slept_from = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const double slept = process_cpu_seconds() - slept_from;
  EXPECT_LT(slept, 0.02);
  // Burn 50 ms of this thread's own CPU (its thread clock, so a busy machine stretches the
  // wall time but not the amount): the process clock must count at least that.
  const double burnt_from = process_cpu_seconds();
  timespec t{};
  auto thread_cpu = [&] {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  };
  const double thread_from = thread_cpu();
  while (thread_cpu() - thread_from < 0.05) {
  }
  EXPECT_GE(process_cpu_seconds() - burnt_from, 0.05);
}

}  // namespace
}  // namespace tunescope
