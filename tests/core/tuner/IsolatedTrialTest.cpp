// Candidates measured in a child process: an ok trial comes back whole (figures,
// kernels, trace), invalid and failed ones with their reasons; a candidate that
// segfaults, aborts or hangs past the time limit is recorded as failed with the signal
// or the limit while the others succeed, and a tune with such candidates picks a winner
// and records every trial.
#include "core/tuner/IsolatedTrial.h"
#include "core/tuner/TrialRunner.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>

#include "TestAlgorithms.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/Tuner.h"

namespace tunescope::tuner {
namespace {

using test_support::config_with;

MeasureOptions isolated() {
  MeasureOptions o;
  o.warmup = 1;
  o.steps = 2;
  o.max_steps = 2;  // a fixed count
  o.isolate = true;
  return o;
}

class IsolatedTrialTest : public ::testing::Test {
 protected:
  SessionOptions base = test_support::tiny_session();
  NumericsSample reference = reference_numerics(base, isolated());
};

TEST_F(IsolatedTrialTest, OkTrialComesBackWithFiguresKernelsAndTrace) {
  const RunConfig config = config_with(base, Layout::NHWC, "gemm");
  const TrialResult r = measure(base, config, reference, isolated());
  ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
  EXPECT_EQ(r.config, config);
  EXPECT_FALSE(r.reused);
  EXPECT_TRUE(r.numerics_checked) << "the child's check did not come back";
  EXPECT_EQ(r.figures.steps, 2);
  EXPECT_GT(r.figures.median_eps, 0);
  EXPECT_LE(r.figures.min_step_ms, r.figures.median_step_ms);
  EXPECT_GT(r.seconds, 0);
  ASSERT_FALSE(r.kernels.empty());
  double share = 0;
  for (const KernelShare& k : r.kernels) share += k.share_pct;
  EXPECT_GT(share, 0);
  EXPECT_LE(share, 100.0 + 1e-9);
  ASSERT_TRUE(r.trace);
  size_t gemm = 0, steps = 0;
  for (const auto& a : r.trace->activities) gemm += a.name.str().rfind("gemm.", 0) == 0;
  for (const auto& range : r.trace->ranges) steps += range.name == "train_step";
  EXPECT_GT(gemm, 0u) << "the trace shows no gemm kernel";
  EXPECT_EQ(steps, 2u) << "the trace covers the timed steps only";
  EXPECT_EQ(r.trace->metadata.backend, "cpu");
}

TEST_F(IsolatedTrialTest, InvalidAndThrowingCandidatesKeepTheirDispositions) {
  const TrialResult wrong =
      measure(base, config_with(base, Layout::NCHW, test_support::kWrong), reference, isolated());
  EXPECT_EQ(wrong.status, TrialStatus::invalid);
  EXPECT_NE(wrong.reason.find("first step: loss"), std::string::npos) << wrong.reason;
  const TrialResult thrown =
      measure(base, config_with(base, Layout::NCHW, test_support::kThrows), reference, isolated());
  EXPECT_EQ(thrown.status, TrialStatus::failed);
  EXPECT_NE(thrown.reason.find("deliberate failure in forward"), std::string::npos)
      << thrown.reason;
}

TEST_F(IsolatedTrialTest, SegfaultAndAbortAreFailedWithTheSignal) {
  const TrialResult segv = measure(base, config_with(base, Layout::NCHW, test_support::kSegfault),
                                   reference, isolated());
  EXPECT_EQ(segv.status, TrialStatus::failed);
  EXPECT_EQ(segv.reason,
            "crashed: its child process was killed by SIGSEGV (Segmentation fault) after 0 steps");
  const TrialResult abrt =
      measure(base, config_with(base, Layout::NHWC, test_support::kAbort), reference, isolated());
  EXPECT_EQ(abrt.status, TrialStatus::failed);
  EXPECT_NE(abrt.reason.find("killed by SIGABRT (Aborted)"), std::string::npos) << abrt.reason;
}

TEST_F(IsolatedTrialTest, HangIsKilledAtTheTimeLimit) {
  MeasureOptions o = isolated();
  o.time_limit_seconds = 0.5;
  const TrialResult r =
      measure(base, config_with(base, Layout::NCHW, test_support::kHang), reference, o);
  EXPECT_EQ(r.status, TrialStatus::failed);
  EXPECT_EQ(
      r.reason,
      "exceeded the per-trial time limit of 0.5 s (after 0 steps); its child process was killed");
}

TEST_F(IsolatedTrialTest, InterleavedCrashFailsBothWithTheReMeasurementPrefix) {
  const auto crashed =
      measure_interleaved(base,
                          {config_with(base, Layout::NCHW, "direct"),
                           config_with(base, Layout::NCHW, test_support::kSegfault)},
                          {&reference, &reference}, isolated(), {});
  ASSERT_EQ(crashed.size(), 2u);
  for (const TrialResult& r : crashed) {
    EXPECT_EQ(r.status, TrialStatus::failed);
    EXPECT_EQ(r.reason.rfind(std::string(kRemeasureReason) + ": crashed: ", 0), 0u) << r.reason;
    EXPECT_NE(r.reason.find("SIGSEGV"), std::string::npos) << r.reason;
  }
  const auto fine = measure_interleaved(
      base, {config_with(base, Layout::NCHW, "direct"), config_with(base, Layout::NHWC, "gemm")},
      {&reference, &reference}, isolated(), {});
  ASSERT_EQ(fine.size(), 2u);
  for (const TrialResult& r : fine) {
    EXPECT_EQ(r.status, TrialStatus::ok) << r.reason;
    EXPECT_EQ(r.figures.steps, 6) << "the sign-flip test's minimum of rounds";
    EXPECT_TRUE(r.trace);
    // The round times come back from the child: the verdict is computed from them.
    EXPECT_EQ(r.step_seconds.size(), 6u);
    EXPECT_EQ(r.figures.stop, StopRule::interleaved);
    EXPECT_TRUE(r.figures.has_interval());
  }
}

// Every new field of a trial survives the child's encoding: the interval, the stop rule,
// the step times and the concurrency figures.
TEST_F(IsolatedTrialTest, IntervalStopRuleAndStepTimesComeBackFromTheChild) {
  MeasureOptions o = isolated();
  o.steps = 3;
  o.max_steps = 8;
  o.delta = 1e-9;
  const TrialResult r = measure(base, config_with(base, Layout::NHWC, "gemm"), reference, o);
  ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
  EXPECT_EQ(r.figures.stop, StopRule::max_steps);
  EXPECT_EQ(r.figures.steps, 8);
  ASSERT_EQ(r.step_seconds.size(), 8u);
  EXPECT_TRUE(r.figures.has_interval());
  EXPECT_EQ(r.figures.median_eps, figures_of(r.step_seconds, base.batch).median_eps);
  EXPECT_EQ(r.figures.eps_low, figures_of(r.step_seconds, base.batch).eps_low);
  EXPECT_EQ(r.figures.eps_high, figures_of(r.step_seconds, base.batch).eps_high);
  ASSERT_TRUE(r.concurrency);
  o.race_against = QuantileEstimate{10, 1e-9, 0.9e-9, 1.1e-9, true};
  EXPECT_EQ(measure(base, config_with(base, Layout::NHWC, "gemm"), reference, o).figures.stop,
            StopRule::raced_out);
}

TEST(IsolatedTune, CrashingCandidatesAreRecordedAndTheTunePicksAWinner) {
  const auto path = std::filesystem::temp_directory_path() / "tunescope-isolated-tune.sqlite";
  std::filesystem::remove(path);
  ResultsDb db(path);
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.algorithms = {test_support::kSegfault, "direct", test_support::kAbort, "gemm"};
  o.measure.warmup = 0;
  o.measure.steps = 2;
  o.measure.isolate = true;
  o.racing = false;  // both ok candidates go on to the interleaved rounds
  const TuneReport report = Tuner(o, &db).run();

  std::map<std::string, const TrialResult*> by_algorithm;
  for (const TrialResult& t : report.trials) by_algorithm[t.config.conv.default_algorithm] = &t;
  ASSERT_EQ(by_algorithm.size(), 4u);
  EXPECT_EQ(by_algorithm[test_support::kSegfault]->status, TrialStatus::failed);
  EXPECT_NE(by_algorithm[test_support::kSegfault]->reason.find("SIGSEGV"), std::string::npos);
  EXPECT_EQ(by_algorithm[test_support::kAbort]->status, TrialStatus::failed);
  EXPECT_NE(by_algorithm[test_support::kAbort]->reason.find("SIGABRT"), std::string::npos);
  EXPECT_EQ(by_algorithm["gemm"]->status, TrialStatus::ok);  // measured after a crash
  EXPECT_EQ(by_algorithm["direct"]->status, TrialStatus::ok);
  const std::string winner = report.winner().config.conv.default_algorithm;
  EXPECT_TRUE(winner == "gemm" || winner == "direct") << winner;
  EXPECT_TRUE(report.winner().remeasured);
  EXPECT_TRUE(report.winner().trace);
  ASSERT_TRUE(report.baseline_trial());
  EXPECT_TRUE(report.baseline_trial()->trace);

  // Every sweep trial plus the two interleaved re-measurements, crashes included.
  const auto rows = db.trials();
  ASSERT_EQ(rows.size(), report.trials.size() + 2);
  size_t crashed = 0;
  for (const auto& r : rows)
    crashed += r.reason.find("crashed: its child process was killed by SIG") == 0;
  EXPECT_EQ(crashed, 2u);
  // The interval and stop rule measured in the children reach the DB unchanged.
  size_t ok_rows = 0;
  for (const auto& r : rows) {
    if (r.status != TrialStatus::ok) continue;
    ++ok_rows;
    EXPECT_NE(r.figures.stop, StopRule::none);
    EXPECT_GE(r.figures.steps, 6) << "--steps 2 is a minimum; the interval needs 6";
    EXPECT_TRUE(r.figures.has_interval());
    EXPECT_LE(r.figures.eps_low, r.figures.median_eps);
    EXPECT_GE(r.figures.eps_high, r.figures.median_eps);
  }
  EXPECT_EQ(ok_rows, 4u);  // gemm and direct in the sweep and in the rounds
  const TrialResult& w = report.winner();
  bool stored = false;
  for (const auto& r : rows)
    if (r.config_json == to_json_text(w.config) && r.figures.stop == StopRule::interleaved) {
      stored = true;
      EXPECT_EQ(r.figures.eps_low, w.figures.eps_low);
      EXPECT_EQ(r.figures.eps_high, w.figures.eps_high);
      EXPECT_EQ(r.reason.rfind(kRemeasureWinnerReason, 0), 0u) << r.reason;
    }
  EXPECT_TRUE(stored);
  std::filesystem::remove(path);
}

TEST(SignalDescription, NamesTheSignal) {
  EXPECT_EQ(signal_description(SIGSEGV), "SIGSEGV (Segmentation fault)");
  EXPECT_EQ(signal_description(SIGKILL), "SIGKILL (Killed)");
}

}  // namespace
}  // namespace tunescope::tuner
