// The isolated child sends the record the results DB stores (TrialRecordFields.h): every
// field of a trial, concurrency, interval and stop rule included, comes back from the
// child as it was, and a real isolated measurement of a two-stream config brings back
// its concurrency, interval and stop rule, which the results DB then stores.
#include <gtest/gtest.h>

#include <variant>

#include "TempResultsDb.h"
#include "TestAlgorithms.h"
#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/IsolatedTrial.h"
#include "core/tuner/TrialRecordFields.h"
#include "core/tuner/TrialRunner.h"

namespace tunescope::tuner {
namespace {

// A trial with every stored field set to a value none has by default.
TrialResult every_field_set() {
  TrialResult t;
  t.config = test_support::config_with(test_support::tiny_session(), Layout::NHWC, "gemm");
  knobs::streams.set(t.config.knobs, 2);
  t.status = TrialStatus::invalid;
  t.reason = "a reason";
  t.figures.steps = 17;
  t.figures.median_eps = 1234.5;
  t.figures.median_step_ms = 6.25;
  t.figures.min_step_ms = 5.5;
  t.figures.spread = 0.125;
  t.figures.eps_low = 1200.25;
  t.figures.eps_high = 1300.75;
  t.figures.stop = StopRule::raced_out;
  t.concurrency = ConcurrencyFigures{0.375, 1.625};
  t.kernels = {{"gemm.fwd", 3, 1.5, 42.0}};
  t.layer_pass_ms = {0.25, 0.5, 0.75};
  t.step_seconds = {0.01, 0.02};
  t.turn_first_seconds = {0.03, 0.04};
  t.step_cpu_seconds = {0.015, 0.025};
  t.numerics_checked = true;
  return t;
}

TEST(IsolatedRecord, EveryStoredFieldSurvivesTheChild) {
  const TrialResult sent = every_field_set();
  const ChildOutcome child =
      run_in_child("cpu", {}, [&](StepCounter&) { return std::vector{sent}; });
  ASSERT_EQ(child.results.size(), 1u) << child.failure;
  const TrialResult& got = child.results.front();
  const TrialRecord a = record_of(sent), b = record_of(got);
  for (const TrialField& f : trial_fields()) {
    ASSERT_FALSE(std::holds_alternative<std::monostate>(f.get(a)))
        << f.name << " is not set in the test trial";
    EXPECT_EQ(f.get(a), f.get(b)) << f.name;
  }
  EXPECT_EQ(got.config, sent.config);
  EXPECT_EQ(got.concurrency, sent.concurrency);
  EXPECT_EQ(got.step_seconds, sent.step_seconds);
  EXPECT_EQ(got.turn_first_seconds, sent.turn_first_seconds);
  EXPECT_EQ(got.step_cpu_seconds, sent.step_cpu_seconds);
  EXPECT_EQ(got.layer_pass_ms, sent.layer_pass_ms);
  EXPECT_TRUE(got.numerics_checked);
  EXPECT_FALSE(got.reused);
}

TEST(IsolatedRecord, JsonRoundTripOfEveryField) {
  const TrialRecord a = record_of(every_field_set());
  const TrialRecord b = record_from_json(record_to_json(a), "test");
  for (const TrialField& f : trial_fields()) EXPECT_EQ(f.get(a), f.get(b)) << f.name;
  nlohmann::json bad = record_to_json(a);
  bad["status"] = "maybe";
  try {
    record_from_json(bad, "the message");
    FAIL() << "an unknown status was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the message: field status"), std::string::npos)
        << e.what();
  }
}

TEST(IsolatedRecord, IsolatedTwoStreamTrialKeepsConcurrencyIntervalAndStopRuleInTheDb) {
  const SessionOptions base = test_support::tiny_session();
  MeasureOptions o;
  o.warmup = 1;
  o.steps = o.max_steps = 8;  // enough for an interval (6), a fixed count: stop max_steps
  o.isolate = true;
  RunConfig config = test_support::config_with(base, Layout::NCHW, "gemm");
  knobs::streams.set(config.knobs, 2);
  const TrialResult r = measure(base, config, reference_numerics(base, o), o);
  ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
  ASSERT_TRUE(r.concurrency.has_value());
  EXPECT_GE(r.concurrency->mean_in_flight, 1.0);
  EXPECT_TRUE(r.figures.has_interval());
  EXPECT_EQ(r.figures.stop, StopRule::max_steps);
  EXPECT_EQ(r.figures.steps, 8);

  const test_support::TempResultsDb file("isolated-record.sqlite");
  ResultsDb db(file.path);
  db.add_trial(db.problem_id({"lenet5", "1x32x32", base.batch}),
               db.machine_id(MachineSignature::local("cpu")), r);
  const TrialRecord stored = db.trials().front();
  for (const TrialField& f : trial_fields())
    EXPECT_EQ(f.get(stored), f.get(record_of(r))) << f.name;
}

// A single-layer trial (the per-layer find's) measured in a child brings back each
// pass's time, which the step-time predictor needs, and the results DB stores them.
TEST(IsolatedRecord, IsolatedLayerTrialKeepsItsPassTimesInTheRecordAndTheDb) {
  const SessionOptions base = test_support::tiny_session();
  ConvProblem problem;
  problem.input = {8, 1, 32, 32};
  problem.out_channels = 6;
  problem.kernel_h = problem.kernel_w = 5;
  problem.layout = Layout::NCHW;
  MeasureOptions o;
  o.steps = o.max_steps = 3;
  o.warmup = 0;
  o.isolate = true;
  const LayerTrial trial{"cpu", problem, "gemm", 1,
                         test_support::config_with(base, Layout::NCHW, "gemm")};
  const TrialResult r = measure_layer(trial, layer_reference(problem), o);
  ASSERT_EQ(r.status, TrialStatus::ok) << r.reason;
  for (double ms : r.layer_pass_ms) EXPECT_GT(ms, 0);
  // The pass times are the fastest of each pass; the three together take at least their sum.
  EXPECT_GE(r.figures.min_step_ms * (1 + 1e-9),
            r.layer_pass_ms[0] + r.layer_pass_ms[1] + r.layer_pass_ms[2]);

  const test_support::TempResultsDb file("isolated-layer-record.sqlite");
  ResultsDb db(file.path);
  db.add_trial(db.problem_id({"lenet5", "1x32x32", base.batch}),
               db.machine_id(MachineSignature::local("cpu")), r);
  const TrialResult back = result_of(db.trials().front(), "cpu");
  EXPECT_EQ(back.layer_pass_ms, r.layer_pass_ms);
  // A whole config's row has none: NULL columns, read back as zeros.
  TrialResult whole = r;
  whole.layer_pass_ms = {};
  db.add_trial(db.problem_id({"lenet5", "1x32x32", base.batch}),
               db.machine_id(MachineSignature::local("cpu")), whole);
  EXPECT_EQ(result_of(db.trials().back(), "cpu").layer_pass_ms, (std::array<double, 3>{}));
}

}  // namespace
}  // namespace tunescope::tuner
