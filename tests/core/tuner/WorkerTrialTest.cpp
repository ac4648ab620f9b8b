// Candidates with workers > 1 (core/tuner/WorkerTrial.h) without MPI: the request
// survives its way to the ranks (round trip), a session refuses a workers count that is
// not its ranks, a tune without a launcher fails such a candidate saying why, and a
// whole tune whose launcher runs the ranks as threads (tests/core/LoopbackRanks.h)
// measures, checks and ranks them beside the one-process candidates, in rounds of whole
// trials. The real `mpirun` launch is tests/cli/TuneWorkersCliTest.cpp.
#include "core/tuner/WorkerTrial.h"

#include <gtest/gtest.h>

#include <atomic>

#include "TempResultsDb.h"
#include "TestAlgorithms.h"
#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/TrialRunner.h"
#include "core/tuner/Tuner.h"
#include "tests/core/LoopbackRanks.h"

namespace tunescope::tuner {
namespace {

RunConfig with_workers(int workers) {
  RunConfig config = run_config_of(test_support::tiny_session());
  knobs::workers.set(config.knobs, workers);
  return config;
}

TEST(WorkerTrial, RequestRoundTripsEveryField) {
  WorkerTrialRequest request;
  request.base = test_support::tiny_session();
  request.base.data = "fake";
  request.base.seed = 77;
  request.base.sgd = {0.05f, 0.5f, 1e-3f};
  request.base.fake_train_count = 123;
  request.base.fake_test_count = 45;
  request.base.fake_channels = 1;
  request.base.train_limit = 9;
  request.base.prefetch = 3;
  request.config = with_workers(2);
  request.config.conv.default_algorithm = "gemm";
  request.reference.loss = 2.302585092994046;
  request.reference.gradients = {{"conv1.weight", {0.1f, -2.5e-7f, 3.0f}}, {"fc3.bias", {}}};
  auto next = std::make_shared<NumericsSample>();
  next->loss = 1.5;
  next->gradients = {{"conv1.weight", {1.0f / 3.0f}}};
  request.reference.next_batch = next;
  request.options.steps = 7;
  request.options.delta = 0.03;
  request.options.time_limit_seconds = 12.5;
  request.options.check_numerics = false;
  request.options.race_against = QuantileEstimate{9, 0.01, 0.009, 0.012, true};

  const WorkerTrialRequest back =
      parse_worker_trial_request(worker_trial_request_text(request), "request.json");
  EXPECT_EQ(back.config, request.config);
  EXPECT_EQ(workers_of(back.config), 2);
  EXPECT_EQ(back.base.seed, 77u);
  EXPECT_EQ(back.base.sgd.learning_rate, 0.05f);
  EXPECT_EQ(back.base.sgd.momentum, 0.5f);
  EXPECT_EQ(back.base.sgd.weight_decay, 1e-3f);
  EXPECT_EQ(back.base.fake_train_count, 123);
  EXPECT_EQ(back.base.fake_test_count, 45);
  EXPECT_EQ(back.base.fake_channels, 1);
  EXPECT_EQ(back.base.train_limit, 9);
  EXPECT_EQ(back.base.prefetch, 3);
  EXPECT_EQ(back.base.ranks, nullptr);
  EXPECT_EQ(back.reference.loss, request.reference.loss);  // bit for bit
  ASSERT_EQ(back.reference.gradients.size(), 2u);
  EXPECT_EQ(back.reference.gradients[0].parameter, "conv1.weight");
  EXPECT_EQ(back.reference.gradients[0].values, request.reference.gradients[0].values);
  ASSERT_TRUE(back.reference.next_batch);
  EXPECT_EQ(back.reference.next_batch->gradients[0].values, next->gradients[0].values);
  EXPECT_FALSE(back.reference.next_batch->next_batch);
  EXPECT_EQ(back.options.steps, 7);
  EXPECT_EQ(back.options.delta, 0.03);
  EXPECT_EQ(back.options.time_limit_seconds, 12.5);
  EXPECT_FALSE(back.options.check_numerics);
  ASSERT_TRUE(back.options.race_against);
  EXPECT_EQ(back.options.race_against->high, 0.012);
}

TEST(WorkerTrial, MalformedRequestIsRefusedNamingTheFile) {
  try {
    parse_worker_trial_request("{\"schema\": \"tunescope.worker-trial/1\"}", "req.json");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("req.json"), std::string::npos) << e.what();
  }
}

TEST(WorkerTrial, ASessionRefusesWorkersThatAreNotItsRanks) {
  SessionOptions options = test_support::tiny_session();
  knobs::workers.set(options.knobs, 2);
  try {
    options.validate();
    FAIL() << "accepted workers=2 in one process";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("mpirun -np 2"), std::string::npos) << e.what();
  }
  knobs::workers.set(options.knobs, 1);
  EXPECT_NO_THROW(options.validate());
  // Two ranks of a config that says 2 workers: fine on both.
  tunescope::test_support::run_ranks(2, [&](Communicator& ranks) {
    SessionOptions on_ranks = options;
    on_ranks.ranks = &ranks;
    knobs::workers.set(on_ranks.knobs, 2);
    on_ranks.validate();
  });
}

TEST(WorkerTrial, WithoutALauncherTheCandidateFailsSayingWhy) {
  const SessionOptions base = test_support::tiny_session();
  MeasureOptions options;
  options.steps = 2;
  const TrialResult result =
      measure(base, with_workers(2), reference_numerics(base, options), options);
  EXPECT_EQ(result.status, TrialStatus::failed);
  EXPECT_NE(result.reason.find("cannot start worker processes"), std::string::npos)
      << result.reason;
}

// The launcher a test can run: the ranks as threads, rank 0's result returned.
WorkerLauncher loopback_launcher(std::atomic<int>& launches) {
  return [&launches](const WorkerTrialRequest& request) {
    ++launches;
    EXPECT_EQ(request.base.ranks, nullptr);
    EXPECT_FALSE(request.options.launch_workers);
    // Sent as text, as the real launcher does.
    const WorkerTrialRequest received =
        parse_worker_trial_request(worker_trial_request_text(request), "request");
    TrialResult rank0;
    tunescope::test_support::run_ranks(workers_of(received.config), [&](Communicator& ranks) {
      TrialResult mine = run_worker_trial(received, ranks);
      if (ranks.rank() == 0) rank0 = std::move(mine);
    });
    return rank0;
  };
}

TEST(WorkerTrial, ATuneMeasuresWorkerCandidatesBesideOneProcessAndRecordsTheWorkers) {
  const test_support::TempResultsDb file("tuner-workers.sqlite");
  ResultsDb db(file.path);
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.knobs.set(knobs::threads, std::vector<int>{1});
  o.knobs.set(knobs::workers, std::vector<int>{1, 2});
  o.algorithms = {"direct", test_support::kWrong};
  o.strategy = Strategy::exhaustive;
  o.measure.warmup = 0;
  o.measure.steps = 2;
  o.racing = false;
  std::atomic<int> launches{0};
  o.measure.launch_workers = loopback_launcher(launches);
  const TuneReport report = Tuner(o, &db).run();

  const TrialResult* two = nullptr;
  const TrialResult* wrong_two = nullptr;
  for (const TrialResult& t : report.trials) {
    if (workers_of(t.config) != 2) continue;
    (t.config.conv.default_algorithm == "direct" ? two : wrong_two) = &t;
  }
  ASSERT_TRUE(two);
  EXPECT_EQ(two->status, TrialStatus::ok) << two->reason;
  EXPECT_TRUE(two->numerics_checked);
  EXPECT_TRUE(two->trace);
  EXPECT_NE(two->config.label().find("workers=2"), std::string::npos) << two->config.label();
  // The wrong algorithm is caught on the ranks as in one process: never timed.
  ASSERT_TRUE(wrong_two);
  EXPECT_EQ(wrong_two->status, TrialStatus::invalid) << wrong_two->reason;
  // The sweep's trial, then the rounds of whole trials among the leaders: one launch each.
  EXPECT_GE(launches.load(), 2);
  EXPECT_TRUE(two->remeasured) << two->reason;
  EXPECT_NE(two->reason.find("rounds"), std::string::npos) << two->reason;
  // The DB's rows carry the workers in their config.
  const auto stored = db.trials();
  EXPECT_TRUE(std::any_of(stored.begin(), stored.end(), [](const TrialRecord& r) {
    return r.status == TrialStatus::ok &&
           workers_of(run_config_from_json_text(r.config_json, "the DB")) == 2;
  }));
  // The tuned config records the workers it was measured with.
  EXPECT_EQ(workers_of(report.tuned_config()), workers_of(report.winner().config));
}

}  // namespace
}  // namespace tunescope::tuner
