// stored_tune rebuilds from the results DB what the tune itself ranked and declared:
// for a finished tune (with its interleaved pair) and for an interrupted one (only the
// trials finished before the stop), and for two problems kept apart in one DB.
#include <gtest/gtest.h>

#include <atomic>

#include "TempResultsDb.h"
#include "TestAlgorithms.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/StoredTune.h"

namespace tunescope::tuner {
namespace {

// Every disposition: ok (direct, gemm, test-slow), invalid, failed, skipped.
TuneOptions space() {
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.algorithms = {"direct",
                  "gemm",
                  test_support::kSlow,
                  test_support::kWrong,
                  test_support::kThrows,
                  test_support::kConv1Only};
  o.measure.warmup = 0;
  o.measure.steps = 2;
  o.racing = false;  // test-slow is fully measured too, as every candidate was before racing
  o.measure.max_steps = 12;  // test-slow's 20 ms passes: keep its adaptive timing short
  return o;
}

std::vector<std::string> ranked_configs(const TuneReport& report) {
  std::vector<std::string> configs;
  for (size_t i : report.ranking) configs.push_back(to_json_text(report.trials[i].config));
  return configs;
}

std::vector<std::string> configs_with(const TuneReport& report, TrialStatus status) {
  std::vector<std::string> configs;
  for (const auto& t : report.trials)
    if (t.status == status) configs.push_back(to_json_text(t.config));
  return configs;
}

void expect_same_ranking(const TuneReport& stored, const TuneReport& tuned) {
  EXPECT_EQ(ranked_configs(stored), ranked_configs(tuned));
  for (TrialStatus s : {TrialStatus::invalid, TrialStatus::failed, TrialStatus::skipped})
    EXPECT_EQ(configs_with(stored, s), configs_with(tuned, s)) << to_string(s);
  ASSERT_TRUE(stored.best_trial() && tuned.best_trial());
  EXPECT_EQ(stored.best_trial()->config, tuned.best_trial()->config);
  EXPECT_EQ(stored.best_trial()->figures.median_eps, tuned.best_trial()->figures.median_eps);
  EXPECT_EQ(stored.best_trial()->remeasured, tuned.best_trial()->remeasured);
  ASSERT_TRUE(stored.baseline_trial() && tuned.baseline_trial());
  EXPECT_EQ(stored.baseline_trial()->config, tuned.baseline_trial()->config);
}

TEST(StoredTune, AFinishedTuneReadsBackWithItsRankingAndInterleavedVerdict) {
  test_support::TempResultsDb file("stored-finished.sqlite");
  ResultsDb db(file.path);
  const TuneReport tuned = Tuner(space(), &db).run();
  ASSERT_TRUE(tuned.winner().remeasured);

  ASSERT_EQ(db.tuned_pairs().size(), 1u);
  const auto [machine_id, problem_id] = db.tuned_pairs().front();
  const TuneReport stored = stored_tune(db, machine_id, problem_id);
  expect_same_ranking(stored, tuned);
  EXPECT_EQ(stored.decision, tuned.decision);
  EXPECT_EQ(stored.trials.size(),
            tuned.trials.size());  // the interleaved rows update two trials, add none
  EXPECT_EQ(stored.problem.model, "lenet5");
  EXPECT_EQ(stored.problem.batch, 8);
  EXPECT_EQ(stored.machine.str(), tuned.machine.str());
}

TEST(StoredTune, AnInterruptedTuneReadsBackAsFarAsItGot) {
  test_support::TempResultsDb file("stored-interrupted.sqlite");
  ResultsDb db(file.path);
  TuneOptions o = space();
  std::atomic<bool> stop{false};
  o.stop = &stop;
  size_t finished = 0;
  const TuneReport tuned = Tuner(o, &db).run([&](const TuneProgress& p) {
    if (p.last && ++finished == 3) stop.store(true);
  });
  ASSERT_TRUE(tuned.interrupted);
  ASSERT_LT(tuned.trials.size(), space().algorithms.size() + 1);

  const auto [machine_id, problem_id] = db.tuned_pairs().front();
  const TuneReport stored = stored_tune(db, machine_id, problem_id);
  EXPECT_EQ(stored.trials.size(), tuned.trials.size());
  expect_same_ranking(stored, tuned);
  EXPECT_NE(stored.decision.find("not re-measured"), std::string::npos) << stored.decision;
}

TEST(StoredTune, ProblemsOfOneDbStayApart) {
  test_support::TempResultsDb file("stored-two-problems.sqlite");
  ResultsDb db(file.path);
  TuneOptions small = space();
  small.algorithms = {"direct", "gemm"};
  TuneOptions larger = small;
  larger.base.batch = 16;
  const TuneReport a = Tuner(small, &db).run();
  const TuneReport b = Tuner(larger, &db).run();

  const auto pairs = db.tuned_pairs();
  ASSERT_EQ(pairs.size(), 2u);
  const TuneReport stored_a = stored_tune(db, pairs[0].first, pairs[0].second);
  const TuneReport stored_b = stored_tune(db, pairs[1].first, pairs[1].second);
  EXPECT_EQ(stored_a.problem.batch, 8);
  EXPECT_EQ(stored_b.problem.batch, 16);
  expect_same_ranking(stored_a, a);
  expect_same_ranking(stored_b, b);
}

RunConfig shaped(Layout layout, const std::string& algorithm, int threads = 1, int streams = 1) {
  RunConfig c;
  knobs::layout.set(c.knobs, layout);
  c.conv.default_algorithm = algorithm;
  knobs::threads.set(c.knobs, threads);
  knobs::streams.set(c.knobs, streams);
  return c;
}

TEST(StoredBaseline, IsTheFirstReferenceShapedConfigWhateverTheBackendsDefault) {
  // A cuda tune: its reference runs cuDNN's implicit GEMM (cuda has no direct).
  EXPECT_EQ(
      stored_baseline({shaped(Layout::NCHW, "cudnn:implicit_gemm"), shaped(Layout::NCHW, "direct"),
                       shaped(Layout::NHWC, "cudnn:implicit_gemm")}),
      std::optional<size_t>(0));
  // Not the shape: nhwc, a second lane, per-layer overrides, a batch split.
  RunConfig mixed = shaped(Layout::NCHW, "gemm");
  mixed.conv.per_layer["conv1"] = "direct";
  RunConfig split = shaped(Layout::NCHW, "direct");
  knobs::replicas.set(split.knobs, 2);
  EXPECT_EQ(
      stored_baseline({shaped(Layout::NHWC, "direct"), shaped(Layout::NCHW, "direct", 1, 2), mixed,
                       split, shaped(Layout::NCHW, "gemm", 2), shaped(Layout::NCHW, "direct")}),
      std::optional<size_t>(4));
  EXPECT_EQ(stored_baseline({shaped(Layout::NHWC, "direct")}), std::nullopt);
}

}  // namespace
}  // namespace tunescope::tuner
