// Interrupting and resuming a tune at the library level: a stop request ends the sweep
// after the trial in flight with the best so far and every finished trial recorded; a
// resumed tune reuses those trials (measuring none twice) and declares the same winner
// as an uninterrupted tune. The space has a clear ordering (direct vs test-slow, which
// sleeps 20 ms per pass), so the winner comparison is deterministic.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>

#include "TestAlgorithms.h"
#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/Tuner.h"

namespace tunescope::tuner {
namespace {

namespace fs = std::filesystem;

struct TempDb {
  fs::path path;
  explicit TempDb(const std::string& name)
      : path(fs::temp_directory_path() / ("tunescope-resume-" + name)) {
    remove();
  }
  ~TempDb() { remove(); }
  void remove() const {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
  }
};

// Baseline (nchw direct), test-slow, test-wrong (invalid), test-throws (failed),
// test-conv1-only (skipped: conv2 has 6 input channels): every disposition once.
TuneOptions space() {
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.knobs.set(knobs::threads, std::vector<int>{1});
  o.algorithms = {"direct", test_support::kSlow, test_support::kWrong, test_support::kThrows,
                  test_support::kConv1Only};
  o.measure.warmup = 0;
  o.measure.steps = 2;
  o.racing = false;  // test-slow is fully measured too, as every candidate was before racing
  o.measure.max_steps = 12;  // test-slow's 20 ms passes: keep its adaptive timing short
  return o;
}

// Sweep rows (not the interleaved re-measurement) per config.
std::map<std::string, int> sweep_rows(const ResultsDb& db) {
  std::map<std::string, int> rows;
  for (const TrialRecord& r : db.trials())
    if (r.reason.rfind(kRemeasureReason, 0) != 0) ++rows[r.config_json];
  return rows;
}

TEST(TunerResume, StopEndsTheSweepWithTheBestSoFarAndResumeFinishesWithTheSameWinner) {
  TempDb interrupted_db("interrupted.sqlite"), fresh_db("fresh.sqlite");

  // An uninterrupted tune: the reference answer.
  ResultsDb fresh(fresh_db.path);
  const TuneReport full = Tuner(space(), &fresh).run();
  ASSERT_FALSE(full.interrupted);
  EXPECT_EQ(full.winner().config.conv.default_algorithm, "direct");
  const size_t candidates = full.trials.size();
  ASSERT_EQ(candidates, 5u);

  // Stop as soon as three trials have finished (as the SIGINT handler would).
  std::atomic<bool> stop{false};
  TuneOptions o = space();
  o.stop = &stop;
  ResultsDb db(interrupted_db.path);
  size_t finished = 0;
  const TuneReport partial = Tuner(o, &db).run([&](const TuneProgress& p) {
    if (p.last && ++finished == 3) stop = true;
  });
  EXPECT_TRUE(partial.interrupted);
  EXPECT_EQ(partial.trials.size(), 3u);
  ASSERT_TRUE(partial.best_trial());  // the baseline ran first
  EXPECT_EQ(partial.best_trial()->config.conv.default_algorithm, "direct");
  EXPECT_FALSE(partial.best_trial()->remeasured);
  EXPECT_EQ(db.trials().size(), 3u);  // every finished trial, and nothing else

  // Resume: the three recorded trials are reused, the rest measured, then the decision.
  TuneOptions r = space();
  r.resume = true;
  const TuneReport resumed = Tuner(r, &db).run();
  EXPECT_FALSE(resumed.interrupted);
  EXPECT_EQ(resumed.reused, 3u);
  EXPECT_EQ(resumed.trials.size(), candidates);
  EXPECT_EQ(resumed.winner().config, full.winner().config);
  EXPECT_TRUE(resumed.winner().remeasured);  // the re-measurement ran on the resumed tune
  // The reused invalid trial keeps its verdict; the two ok ones were re-measured (fresh
  // figures), the failing one measured now.
  std::map<std::string, const TrialResult*> by_algorithm;
  for (const TrialResult& t : resumed.trials) by_algorithm[t.config.conv.default_algorithm] = &t;
  ASSERT_EQ(by_algorithm.size(), candidates);
  EXPECT_TRUE(by_algorithm[test_support::kWrong]->reused);
  EXPECT_EQ(by_algorithm[test_support::kWrong]->status, TrialStatus::invalid);
  EXPECT_FALSE(by_algorithm[test_support::kThrows]->reused);
  EXPECT_EQ(by_algorithm[test_support::kThrows]->status, TrialStatus::failed);
  EXPECT_TRUE(by_algorithm["direct"]->remeasured);
  EXPECT_TRUE(by_algorithm[test_support::kSlow]->remeasured);

  // No config was measured twice, and the same configs as the uninterrupted tune were.
  const auto rows = sweep_rows(db);
  EXPECT_EQ(rows, sweep_rows(fresh));
  for (const auto& [config, count] : rows) EXPECT_EQ(count, 1) << config;

  // A second resume measures nothing new in the sweep: everything is reused, including
  // the skipped candidate's row (it is not recorded again).
  const TuneReport again = Tuner(r, &db).run();
  EXPECT_EQ(again.reused, candidates);
  EXPECT_EQ(sweep_rows(db), rows);
  EXPECT_EQ(again.winner().config, full.winner().config);
}

TEST(TunerResume, StopBeforeAnyTrialIsNotAnError) {
  std::atomic<bool> stop{true};
  TuneOptions o = space();
  o.stop = &stop;
  const TuneReport report = Tuner(o).run();
  EXPECT_TRUE(report.interrupted);
  EXPECT_TRUE(report.trials.empty());
  EXPECT_FALSE(report.best_trial());
  EXPECT_THROW(report.winner(), Error);
}

TEST(TunerResume, ResumeWithoutADbIsAUsageError) {
  TuneOptions o = space();
  o.resume = true;
  try {
    Tuner tuner(o);
    FAIL() << "resume without a DB was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("resume needs a results DB"), std::string::npos)
        << e.what();
  }
}

// A budget skip is not a verdict: a resumed tune measures the candidate.
TEST(TunerResume, BudgetSkippedTrialsAreMeasuredOnResume) {
  TempDb file("budget.sqlite");
  ResultsDb db(file.path);
  TuneOptions o = space();
  o.algorithms = {"direct", test_support::kSlow};
  o.budget_seconds = 1e-9;  // only the baseline starts
  const TuneReport cut = Tuner(o, &db).run();
  ASSERT_TRUE(cut.budget_exhausted);
  o.budget_seconds = 0;
  o.resume = true;
  const TuneReport resumed = Tuner(o, &db).run();
  EXPECT_EQ(resumed.reused, 1u);  // the baseline only
  size_t ok = 0;
  for (const TrialResult& t : resumed.trials) ok += t.status == TrialStatus::ok;
  EXPECT_EQ(ok, 2u);
}

}  // namespace
}  // namespace tunescope::tuner
