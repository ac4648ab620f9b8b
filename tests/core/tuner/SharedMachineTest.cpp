// Tuning on a shared machine (SharedMachine.h): what the watch sees of another process's
// busy loop, which cores a candidate can count on, the charge for CPU beyond them, that
// timed steps are charged where they are timed (one trial and the interleaved rounds),
// and a verdict the charge turns: an oversubscribed member fast only by taking another
// process's CPU loses to one that fits.
#include "core/tuner/SharedMachine.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "TestAlgorithms.h"
#include "core/base/CpuAffinity.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/Ranking.h"
#include "core/tuner/TrialRunner.h"

namespace tunescope::tuner {
namespace {

TEST(SharedMachine, TheChargeIsForCpuBeyondTheFreeCoresOnly) {
  // 10 ms of wall that used 20 ms of CPU, one core free: charged as 20 ms.
  EXPECT_DOUBLE_EQ(charged_step_seconds(0.010, 0.020, 1.0), 0.020);
  // Within the free cores: unchanged.
  EXPECT_DOUBLE_EQ(charged_step_seconds(0.010, 0.008, 1.0), 0.010);
  EXPECT_DOUBLE_EQ(charged_step_seconds(0.010, 0.020, 2.0), 0.010);
  // 1.4 cores used where 1.25 are free: 1.12x.
  EXPECT_NEAR(charged_step_seconds(0.010, 0.014, 1.25), 0.0112, 1e-12);
  // Not charged: a quiet machine (0 free cores given), or no CPU time measured.
  EXPECT_DOUBLE_EQ(charged_step_seconds(0.010, 0.050, 0.0), 0.010);
  EXPECT_DOUBLE_EQ(charged_step_seconds(0.010, -1.0, 1.0), 0.010);
}

TEST(SharedMachine, ABoundRunIsNotCharged) {
  RunConfig config;
  knobs::threads.set(config.knobs, 2);
  EXPECT_DOUBLE_EQ(free_cores_charged(config, 1.0), 1.0);  // unbound: the OS places it
  knobs::cpu_binding.set(config.knobs, CpuBinding::cores);
  EXPECT_DOUBLE_EQ(free_cores_charged(config, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(charged_step_seconds(0.010, 0.020, free_cores_charged(config, 1.0)), 0.010);
}

TEST(SharedMachine, FreeCoresLeaveTheOthersTheirShareButAtLeastOne) {
  ForeignLoad quiet{2, 0.1, 0.25};
  EXPECT_FALSE(quiet.shared());
  EXPECT_DOUBLE_EQ(quiet.free_cores(), 2.0);
  EXPECT_NE(quiet.describe().find("quiet"), std::string::npos) << quiet.describe();
  ForeignLoad loop{2, 0.98, 0.25};
  EXPECT_TRUE(loop.shared());
  EXPECT_DOUBLE_EQ(loop.free_cores(), 2.0 - 0.98);
  EXPECT_NE(loop.describe().find("charge"), std::string::npos) << loop.describe();
  ForeignLoad crowded{2, 2.0, 0.25};
  EXPECT_DOUBLE_EQ(crowded.free_cores(), 1.0);
}

TEST(SharedMachine, TheWatchSeesAnotherProcesssBusyLoopAndNotItsOwnSleep) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (;;) asm volatile("");  // spin until killed
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the loop start
  const ForeignLoad load = watch_foreign_load(0.3);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(load.cores, static_cast<int>(allowed_cpus().size()));
  EXPECT_NEAR(load.watch_seconds, 0.3, 0.1);
  // The loop alone is a core where it has one; on a crowded machine it gets less, but the
  // others then fill the cores: either way the others' share is at least a third of one.
  EXPECT_GE(load.other_cores, 0.33);
  EXPECT_LE(load.other_cores, load.cores);
  EXPECT_TRUE(load.shared());
}

// A member 20% faster by wall time while using 1.4 cores, against one using 1 core, with
// one core free: charged, it is 1.4 x 0.8 = 1.12x the other's, so the other wins.
TEST(SharedMachine, TheChargeTurnsAVerdictWonByTakingAnotherProcesssCpu) {
  RunConfig fits, oversubscribed;
  fits.batch = oversubscribed.batch = 8;
  knobs::threads.set(fits.knobs, 1);
  knobs::threads.set(oversubscribed.knobs, 2);
  const auto rounds = [](double free_cores) {
    std::vector<std::vector<double>> seconds(2);
    for (int r = 0; r < 12; ++r) {
      const double jitter = 1 + 0.002 * (r % 3);
      seconds[0].push_back(charged_step_seconds(0.010 * jitter, 0.010 * jitter, free_cores));
      seconds[1].push_back(charged_step_seconds(0.008 * jitter, 0.008 * 1.4 * jitter, free_cores));
    }
    return seconds;
  };
  // On a quiet machine (nothing charged) the wall times decide.
  EXPECT_EQ(rounds_verdict({fits, oversubscribed}, rounds(0.0), 0.02).winner, 1u);
  const RoundsVerdict charged = rounds_verdict({fits, oversubscribed}, rounds(1.0), 0.02);
  EXPECT_EQ(charged.winner, 0u) << charged.decision;
  EXPECT_TRUE(charged.comparisons.at(0).significant) << charged.decision;
}

// Every timed step of a tune is charged where it is timed: the rounds' tests, the
// results' step times and their figures all see the charged times, with the CPU times
// beside them; with nothing free to speak of, a step counts as its CPU time / free cores.
TEST(SharedMachine, TimedStepsAreChargedWhereTheyAreTimed) {
  const SessionOptions base = test_support::tiny_session();
  MeasureOptions o;
  o.warmup = 1;
  o.steps = 6;
  o.max_steps = 6;
  const NumericsSample reference = reference_numerics(base, o);
  const RunConfig direct = test_support::config_with(base, Layout::NCHW, "direct");
  const TrialResult wall = measure(base, direct, reference, o);
  o.free_cores = 0.01;  // a step using more than 1% of a core is charged
  const auto expect_charged = [](const TrialResult& r) {
    ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
    ASSERT_EQ(r.step_cpu_seconds.size(), r.step_seconds.size());
    for (size_t s = 0; s < r.step_seconds.size(); ++s) {
      ASSERT_GT(r.step_cpu_seconds[s], 0.0);
      EXPECT_NEAR(r.step_seconds[s], r.step_cpu_seconds[s] / 0.01, 1e-9 * r.step_seconds[s]);
    }
    EXPECT_DOUBLE_EQ(r.figures.median_step_ms,
                     figures_of(r.step_seconds, r.config.batch).median_step_ms);
  };
  const TrialResult charged = measure(base, direct, reference, o);
  expect_charged(charged);
  // The charge is large here: far above the wall steps of the same config.
  EXPECT_GT(charged.figures.median_step_ms, 5 * wall.figures.median_step_ms);
  std::vector<std::vector<double>> seen;
  const std::vector<TrialResult> results = measure_interleaved(
      base, {direct, test_support::config_with(base, Layout::NHWC, "gemm")},
      {&reference, &reference}, o, [&](const std::vector<std::vector<double>>& rounds) {
        seen = rounds;
        return true;
      });
  ASSERT_EQ(results.size(), 2u);
  ASSERT_EQ(seen.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    expect_charged(results[k]);
    EXPECT_EQ(seen[k], results[k].step_seconds) << "the rounds' tests see the charged steps";
  }
}

}  // namespace
}  // namespace tunescope::tuner
