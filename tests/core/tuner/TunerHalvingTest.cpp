// The `halving` strategy on tiny lenet5, in a space where one candidate (direct) is
// clearly the fastest: test-only algorithms that are `direct` plus a sleep in every
// forward pass (3 to 20 ms, against a step of about a millisecond) make a field of
// slow candidates with margins far above any noise, next to wrong and throwing ones.
// Only orderings are asserted, never a time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "TempResultsDb.h"
#include "TestAlgorithms.h"
#include "core/base/Registry.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/SuccessiveHalving.h"
#include "core/tuner/Tuner.h"

namespace tunescope::tuner {
namespace {

class SleepyConv final : public ConvAlgorithm {
 public:
  SleepyConv(std::string name, int sleep_ms)
      : name_(std::move(name)),
        sleep_ms_(sleep_ms),
        direct_(Registry::instance().make_conv_algorithm("cpu", "direct")) {}
  std::string name() const override { return name_; }
  std::string unsupported_reason(const ConvProblem& p) const override {
    return direct_->unsupported_reason(p);
  }
  size_t workspace_bytes(const ConvProblem& p) const override {
    return direct_->workspace_bytes(p);
  }
  void forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
    direct_->forward(call, x, w, y);
  }
  void backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) override {
    direct_->backward_data(call, dy, w, dx);
  }
  void backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                       Tensor& dw) override {
    direct_->backward_filter(call, x, dy, dw);
  }

 private:
  std::string name_;
  int sleep_ms_;
  std::unique_ptr<ConvAlgorithm> direct_;
};

const std::vector<std::pair<std::string, int>> kSleepy = {{"test-sleep-3ms", 3},
                                                          {"test-sleep-5ms", 5},
                                                          {"test-sleep-8ms", 8},
                                                          {"test-sleep-12ms", 12},
                                                          {"test-sleep-20ms", 20}};

const bool registered = [] {
  for (const auto& [name, ms] : kSleepy)
    ConvAlgorithmRegistration("cpu", name, [name, ms](const KnobValues&) {
      return std::make_unique<SleepyConv>(name, ms);
    });
  return true;
}();

// direct, five sleepy ones and test-slow (7 ok), one wrong, one throwing: 9 runnable.
TuneOptions field(Strategy strategy) {
  TuneOptions o;
  o.base = test_support::tiny_session();
  o.knobs.set(knobs::layout, std::vector<Layout>{Layout::NCHW});
  o.algorithms = {"direct", test_support::kSlow, test_support::kWrong, test_support::kThrows};
  for (const auto& entry : kSleepy) o.algorithms.push_back(entry.first);
  o.strategy = strategy;
  o.measure.warmup = 1;
  o.measure.steps = 4;
  // Fixed counts (the minimum is the maximum) and no racing: the rounds' step counts are
  // what these tests check.
  o.measure.max_steps = 4;
  o.racing = false;
  return o;
}

const TrialResult& trial_of(const TuneReport& report, const std::string& algorithm) {
  for (const auto& t : report.trials)
    if (t.config.conv.default_algorithm == algorithm) return t;
  throw std::runtime_error("no trial of " + algorithm);
}

TEST(SuccessiveHalving, KeepsAThirdAndTimesTheLastRoundWithTheFullSteps) {
  EXPECT_EQ(halving_keep(16), 6u);
  EXPECT_EQ(halving_keep(2), 1u);
  EXPECT_EQ(halving_rounds(16), 3u);  // 16 -> 6 -> 2 -> 1
  EXPECT_EQ(halving_rounds(1), 0u);
  EXPECT_EQ(halving_steps(16, 10), 2);  // ceil(10 / 9)
  EXPECT_EQ(halving_steps(6, 10), 4);   // ceil(10 / 3)
  EXPECT_EQ(halving_steps(2, 10), 10);
  EXPECT_EQ(halving_steps(1000, 5), 1);
  EXPECT_EQ(halving_work(16), 16u + 6u + 2u);
  EXPECT_EQ(halving_work(1), 0u);
}

TEST(TunerHalving, PicksTheWinnerExhaustivePicksAndRecordsEveryCandidateOnceWithItsLastRound) {
  ASSERT_TRUE(registered);
  const TuneReport exhaustive = Tuner(field(Strategy::exhaustive)).run();

  const test_support::TempResultsDb file("tuner-halving.sqlite");
  ResultsDb db(file.path);
  size_t progress_calls = 0, last_total = 0, max_round = 0;
  const TuneReport halving = Tuner(field(Strategy::halving), &db).run([&](const TuneProgress& p) {
    ++progress_calls;
    last_total = p.total;
    max_round = std::max(max_round, p.round);
    EXPECT_LE(p.index, p.total);
  });

  EXPECT_EQ(exhaustive.winner().config.conv.default_algorithm, "direct");
  EXPECT_EQ(halving.winner().config, exhaustive.winner().config);
  EXPECT_EQ(halving.rounds, 2u);  // 7 ok -> 3 -> 1
  EXPECT_EQ(max_round, 1u);
  EXPECT_EQ(last_total, halving_work(9));  // planned for the 9 runnable candidates
  EXPECT_GT(progress_calls, 0u);

  // Wrong numerics never race on; the throwing one is failed.
  EXPECT_EQ(trial_of(halving, test_support::kWrong).status, TrialStatus::invalid);
  EXPECT_EQ(trial_of(halving, test_support::kThrows).status, TrialStatus::failed);
  // Round 0 timed ceil(4 / 3) = 2 steps (brief); the three survivors were timed 4 in
  // round 1, the last; having no interval at 4 steps, none of them can be told apart from
  // the leader, so all three went to the interleaved rounds. There the sign-flip test
  // needs 6 rounds (its minimum) to decide. A member may leave earlier, at the
  // separation test's first look (5 rounds), or at that look, slower with confidence,
  // while one noisy round keeps the verdict open until the drop eases the
  // multiple-comparison bound; a noisy round can also keep all of them longer. So each
  // ends settled after at least 6 rounds or raced out after at least 5.
  auto in_rounds = [](const TrialResult& t) {
    return (t.remeasured && t.figures.steps >= 6) ||
           (t.figures.stop == StopRule::raced_out &&
            t.figures.steps >= static_cast<int64_t>(kEarliestSeparationLook));
  };
  size_t first_round = 0, settled = 0;
  for (const auto& t : halving.trials) {
    if (t.status != TrialStatus::ok) continue;
    first_round += t.figures.steps == 2 && t.figures.stop == StopRule::brief;
    settled += in_rounds(t);
  }
  EXPECT_EQ(first_round, 4u);
  EXPECT_EQ(settled, 3u);
  EXPECT_TRUE(trial_of(halving, "direct").remeasured);
  EXPECT_EQ(trial_of(halving, "test-sleep-20ms").figures.steps, 2);  // eliminated in round 0
  // The ranking puts the round-1 finishers above everyone eliminated in round 0.
  ASSERT_EQ(halving.ranking.size(), 7u);
  EXPECT_EQ(halving.ranking.front(), *halving.best);
  for (size_t r = 0; r < 3; ++r) EXPECT_TRUE(in_rounds(halving.trials[halving.ranking[r]])) << r;
  for (size_t r = 3; r < 7; ++r)
    EXPECT_EQ(halving.trials[halving.ranking[r]].figures.stop, StopRule::brief) << r;

  // One row per candidate with the figures of its last round, plus the three interleaved rows.
  const auto rows = db.trials();
  ASSERT_EQ(rows.size(), halving.trials.size() + 3);
  std::map<std::string, int64_t> steps_of;
  for (const auto& r : rows)
    if (r.reason.rfind(kRemeasureReason, 0) != 0) {
      EXPECT_EQ(steps_of.count(r.config_json), 0u) << "recorded twice: " << r.config_json;
      steps_of[r.config_json] = r.figures.steps;
    }
  EXPECT_EQ(steps_of.size(), halving.trials.size());
  EXPECT_EQ(steps_of.at(to_json_text(trial_of(halving, "test-sleep-20ms").config)), 2);
  EXPECT_EQ(steps_of.at(to_json_text(trial_of(halving, test_support::kWrong).config)), 0);
}

TEST(TunerHalving, ChecksEachCandidatesNumericsOnceNotInEveryRound) {
  ASSERT_TRUE(registered);
  std::map<std::string, int> checks, measurements;  // per candidate, over all rounds
  size_t later_round_checks = 0;
  const TuneReport report = Tuner(field(Strategy::halving)).run([&](const TuneProgress& p) {
    if (!p.last) return;
    ++measurements[p.candidate];
    checks[p.candidate] += p.last->numerics_checked;
    if (p.round > 0) later_round_checks += p.last->numerics_checked;
  });
  ASSERT_EQ(report.rounds, 2u);  // 7 ok -> 3 -> 1: three candidates are measured twice
  size_t raced_twice = 0;
  for (const auto& [candidate, count] : measurements) {
    raced_twice += count == 2;
    // The throwing one fails inside its check's step, so its check never completes.
    const bool throws = candidate.find(test_support::kThrows) != std::string::npos;
    EXPECT_EQ(checks[candidate], throws ? 0 : 1) << candidate << " measured " << count << " times";
  }
  EXPECT_EQ(raced_twice, 3u);
  EXPECT_EQ(later_round_checks, 0u);
}

TEST(TunerHalving, AnInterruptedRaceRecordsEveryFinishedTrial) {
  const test_support::TempResultsDb file("tuner-halving-stop.sqlite");
  ResultsDb db(file.path);
  TuneOptions o = field(Strategy::halving);
  std::atomic<bool> stop{false};
  o.stop = &stop;
  size_t finished = 0;
  const TuneReport report = Tuner(o, &db).run([&](const TuneProgress& p) {
    if (p.last && ++finished == 3) stop.store(true);  // in the first round
  });
  ASSERT_TRUE(report.interrupted);
  EXPECT_EQ(db.trials().size(), report.trials.size());
  size_t ok = 0;
  for (const auto& r : db.trials()) ok += r.status == TrialStatus::ok;
  EXPECT_GE(ok, 2u);
}

TEST(TunerHalving, BudgetStopsTheRaceAfterTheBaseline) {
  TuneOptions o = field(Strategy::halving);
  o.budget_seconds = 1e-9;
  const TuneReport report = Tuner(o).run();
  EXPECT_TRUE(report.budget_exhausted);
  size_t ok = 0;
  for (const auto& t : report.trials) {
    ok += t.status == TrialStatus::ok;
    if (&t != report.baseline_trial() && t.status != TrialStatus::skipped)
      ADD_FAILURE() << t.config.label();
  }
  EXPECT_EQ(ok, 1u);
  EXPECT_EQ(report.rounds, 1u);
  EXPECT_EQ(report.winner().config, report.baseline_trial()->config);
}

}  // namespace
}  // namespace tunescope::tuner
