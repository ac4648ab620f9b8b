// `--prune on` on tiny lenet5 (a step of about a millisecond) with test-slow (direct plus
// a 20 ms sleep in every pass: about 100x slower, far beyond any margin or noise), a wrong
// algorithm (the find refuses it, so it is unpredictable and measured) and direct: only
// orderings and dispositions are asserted, never a time.
#include <gtest/gtest.h>

#include "TempResultsDb.h"
#include "TestAlgorithms.h"
#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/Tuner.h"

namespace tunescope::tuner {
namespace {

TuneOptions pruned_tune(double margin) {
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.algorithms = {"direct", test_support::kSlow, test_support::kWrong};
  o.strategy = Strategy::exhaustive;
  o.measure.warmup = 1;
  o.measure.steps = 3;
  o.measure.max_steps = 3;
  o.racing = false;
  o.find.repetitions = 2;
  o.prune.enabled = true;
  o.prune.margin = margin;
  return o;
}

const TrialResult& trial_of(const TuneReport& report, const std::string& algorithm) {
  for (const auto& t : report.trials)
    if (t.config.conv.default_algorithm == algorithm) return t;
  throw std::runtime_error("no trial of " + algorithm);
}

TEST(CandidatePruning, MarginCoversAnErrorOnBothPredictions) {
  // A candidate at best x (1 + margin) is slower even if it was overestimated by e and the best
  // underestimated by e.
  const double e = 0.2;
  EXPECT_NEAR((1 + prune_margin_for_error(e)) / (1 + e), 1 / (1 - e), 1e-12);
  EXPECT_EQ(prune_margin_for_error(0), 0);
}

TEST(CandidatePruning, PrunesThePredictedSlowKeepsTheBestAndRecordsThePruned) {
  const test_support::TempResultsDb file("tuner-pruning.sqlite");
  ResultsDb db(file.path);
  // A margin of 0.5, not the default: under a sanitizer a step of `direct` costs tens of
  // milliseconds, so test-slow is only a few times slower, not 100x.
  const TuneReport report = Tuner(pruned_tune(0.5), &db).run();

  const TrialResult& slow = trial_of(report, test_support::kSlow);
  EXPECT_EQ(slow.status, TrialStatus::pruned);
  EXPECT_NE(slow.reason.find("predicted"), std::string::npos) << slow.reason;
  EXPECT_NE(slow.reason.find("above the best predicted"), std::string::npos) << slow.reason;
  EXPECT_EQ(slow.figures.steps, 0);  // never measured
  // The wrong one is unpredictable (the find refuses it), so it is measured and found invalid.
  EXPECT_EQ(trial_of(report, test_support::kWrong).status, TrialStatus::invalid);
  EXPECT_EQ(report.winner().config.conv.default_algorithm, "direct");
  // The ranking holds the measured ok trials only.
  for (size_t i : report.ranking) EXPECT_EQ(report.trials[i].status, TrialStatus::ok);

  // Recorded as pruned with the prediction, read back as such.
  size_t pruned_rows = 0;
  for (const TrialRecord& row : db.trials()) {
    if (row.status != TrialStatus::pruned) continue;
    ++pruned_rows;
    EXPECT_NE(row.config_json.find(test_support::kSlow), std::string::npos);
    EXPECT_EQ(row.reason, slow.reason);
  }
  EXPECT_EQ(pruned_rows, 1u);
}

TEST(CandidatePruning, AMarginAboveEveryGapPrunesNothing) {
  const TuneReport report = Tuner(pruned_tune(1e6)).run();
  EXPECT_EQ(trial_of(report, test_support::kSlow).status, TrialStatus::ok);
  for (const auto& t : report.trials) EXPECT_NE(t.status, TrialStatus::pruned) << t.config.label();
}

TEST(CandidatePruning, RefusesANegativeMargin) {
  TuneOptions o = pruned_tune(-0.1);
  EXPECT_THROW(Tuner(o).run(), Error);
}

}  // namespace
}  // namespace tunescope::tuner
