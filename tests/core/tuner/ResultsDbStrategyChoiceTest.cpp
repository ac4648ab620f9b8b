// The strategy a tune ran and why, in the results DB: stored and read back (the latest
// per machine and problem), carried by stored_tune for `report`, and a DB written before
// the table existed opens without a choice and gains the table.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "TempResultsDb.h"
#include "core/tuner/ResultsDb.h"
#include "core/tuner/StoredTune.h"

namespace tunescope::tuner {
namespace {

using test_support::kMachine;

const ProblemKey kLenet{"lenet5", "1x32x32", 8};
const ProblemKey kResnet{"resnet18-small", "3x32x32", 8};

StrategyChoice choice(Strategy requested, Strategy run, const std::string& reason) {
  return {requested,
          run,
          {{Strategy::exhaustive, 12.5, 17},
           {Strategy::per_layer, 8.25, 9},
           {Strategy::halving, 14, 25}},
          reason};
}

using test_support::ok_trial;

TEST(ResultsDbStrategyChoice, TheLatestChoicePerProblemReadsBack) {
  test_support::TempResultsDb file("results-choice.sqlite");
  const StrategyChoice first = choice(Strategy::automatic, Strategy::halving, "auto: first");
  const StrategyChoice second = choice(Strategy::automatic, Strategy::per_layer, "auto: second");
  const StrategyChoice other = choice(Strategy::exhaustive, Strategy::exhaustive, "requested");
  {
    ResultsDb db(file.path);
    const int64_t m = db.machine_id(kMachine);
    const int64_t lenet = db.problem_id(kLenet), resnet = db.problem_id(kResnet);
    EXPECT_FALSE(db.latest_strategy_choice(lenet, m));
    db.add_strategy_choice(lenet, m, first);
    db.add_strategy_choice(resnet, m, other);
    db.add_strategy_choice(lenet, m, second);
    db.add_trial(lenet, m, ok_trial());
  }
  const ResultsDb db(file.path);
  const int64_t m = db.tuned_pairs().front().first, lenet = db.tuned_pairs().front().second;
  EXPECT_EQ(db.latest_strategy_choice(lenet, m), second);
  EXPECT_EQ(db.latest_strategy_choice(lenet + 1, m), other);
  EXPECT_FALSE(db.latest_strategy_choice(lenet, m + 1));
  EXPECT_EQ(stored_tune(db, m, lenet).strategy_choice, second);
}

TEST(ResultsDbStrategyChoice, AnOlderFileOpensWithoutAChoiceAndGainsTheTable) {
  test_support::TempResultsDb file("results-before-choices.sqlite");
  {
    ResultsDb db(file.path);
    db.add_trial(db.problem_id(kLenet), db.machine_id(kMachine), ok_trial());
  }
  // The previous build's file: this schema without the strategy_choices table.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(file.path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "DROP TABLE strategy_choices", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);

  ResultsDb db(file.path);
  const int64_t m = db.machine_id(kMachine), p = db.problem_id(kLenet);
  EXPECT_FALSE(db.latest_strategy_choice(p, m));
  EXPECT_FALSE(stored_tune(db, 1, 1).strategy_choice);
  const StrategyChoice c = choice(Strategy::automatic, Strategy::exhaustive, "auto: exhaustive");
  db.add_strategy_choice(p, m, c);
  EXPECT_EQ(db.latest_strategy_choice(p, m), c);
}

}  // namespace
}  // namespace tunescope::tuner
