// The per-trial time limit in the measuring process: it acts between steps, counts the
// steps, names the limit and the steps in the reason, and a tune goes on past a
// candidate over the limit. (The deliberately slow algorithm sleeps 20 ms in each conv
// pass, 5 per lenet5 step as conv1 needs no data gradient, so one of its steps takes at
// least 100 ms whatever the load.)
#include "core/tuner/TrialRunner.h"
#include "core/tuner/TrialTimeLimit.h"

#include <gtest/gtest.h>

#include <thread>

#include "TestAlgorithms.h"
#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/Tuner.h"

namespace tunescope::tuner {
namespace {

using test_support::config_with;

TEST(TrialTimeLimit, CountsStepsAndThrowsOnlyOncePastTheLimit) {
  StepCounter counter{0};
  TrialTimeLimit none(0, 1, &counter);
  for (int i = 0; i < 3; ++i) none.step_done();
  EXPECT_EQ(counter.load(), 3);

  TrialTimeLimit tight(0.01, 1, &counter);
  tight.step_done();  // within 10 ms of its start
  EXPECT_EQ(counter.load(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  try {
    tight.step_done();
    FAIL() << "a step past the limit did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::runtime);
    EXPECT_STREQ(e.what(), "exceeded the per-trial time limit of 0.01 s (after 2 steps)");
  }
  EXPECT_EQ(counter.load(), 2);

  TrialTimeLimit pair(0.01, 2, nullptr);  // two trials measured together: twice the time
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_THROW(pair.step_done(), Error);
}

TEST(TrialTimeLimit, ReasonNamesLimitStepsAndTrials) {
  EXPECT_EQ(time_limit_reason(2, 1), "exceeded the per-trial time limit of 2 s (after 1 step)");
  EXPECT_EQ(time_limit_reason(0.5, 0, 2),
            "exceeded the per-trial time limit of 0.5 s (x2 for trials measured together; after 0 "
            "steps)");
}

TEST(TrialTimeLimit, SlowCandidateFailsAfterItsFirstStep) {
  const SessionOptions base = test_support::tiny_session();
  MeasureOptions options;
  options.warmup = 1;
  options.steps = 2;
  options.isolate = false;
  const NumericsSample reference = reference_numerics(base, options);
  options.time_limit_seconds = 0.05;  // below one step of test-slow
  const TrialResult r = measure(base, config_with(base, test_support::kSlow), reference, options);
  EXPECT_EQ(r.status, TrialStatus::failed);
  EXPECT_EQ(r.reason, "exceeded the per-trial time limit of 0.05 s (after 1 step)");
  EXPECT_EQ(r.figures.steps, 0);
  EXPECT_FALSE(r.trace);
}

TEST(TrialTimeLimit, TuneGoesOnPastTheSlowCandidate) {
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.algorithms = {test_support::kSlow, "direct", "gemm"};
  o.measure.warmup = 0;
  o.measure.steps = 2;
  o.measure.isolate = false;
  // test-slow needs at least 3 x 100 ms for its 3 steps; direct and gemm a few ms each.
  o.measure.time_limit_seconds = 0.25;
  const TuneReport report = Tuner(o).run();
  size_t ok = 0;
  for (const TrialResult& t : report.trials) {
    if (t.config.conv.default_algorithm == test_support::kSlow) {
      EXPECT_EQ(t.status, TrialStatus::failed);
      EXPECT_NE(t.reason.find("exceeded the per-trial time limit of 0.25 s (after "),
                std::string::npos)
          << t.reason;
    } else {
      EXPECT_EQ(t.status, TrialStatus::ok) << t.config.label() << ": " << t.reason;
      ++ok;
    }
  }
  EXPECT_EQ(ok, 2u);
  EXPECT_NE(report.winner().config.conv.default_algorithm, test_support::kSlow);
}

TEST(TrialTimeLimit, NegativeLimitIsAUsageError) {
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.measure.time_limit_seconds = -1;
  try {
    Tuner{o};
    FAIL() << "a negative time limit was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("trial_timeout must be >= 0"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tunescope::tuner
