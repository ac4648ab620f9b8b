// The adaptive timing's columns of `trials` (eps_low, eps_high, stop_rule): a round trip,
// a file of a build before them (read as it is, read-only; given them on a read-write
// open, its older rows still read), and a bad stop rule named with its row.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "TempResultsDb.h"
#include "core/base/Error.h"
#include "core/tuner/ResultsDb.h"

namespace tunescope::tuner {
namespace {

using test_support::kMachine;
using test_support::kProblem;

TrialResult timed(const std::string& algorithm, StopRule stop) {
  TrialResult t;
  t.config.batch = 8;
  t.config.conv.default_algorithm = algorithm;
  t.status = TrialStatus::ok;
  t.figures = {14, 1000, 8, 7, 0.01};
  t.figures.eps_low = 987.5;
  t.figures.eps_high = 1012.25;
  t.figures.stop = stop;
  return t;
}

TEST(ResultsDbInterval, IntervalAndStopRuleRoundTrip) {
  const test_support::TempResultsDb file("interval-roundtrip.sqlite");
  {
    ResultsDb db(file.path);
    const int64_t p = db.problem_id(kProblem), m = db.machine_id(kMachine);
    for (StopRule stop : {StopRule::converged, StopRule::max_steps, StopRule::time_cap,
                          StopRule::raced_out, StopRule::brief, StopRule::interleaved})
      db.add_trial(p, m, timed("direct", stop));
    TrialResult no_interval = timed("gemm", StopRule::brief);
    no_interval.figures.eps_low = no_interval.figures.eps_high = 0;  // 2 steps: none
    db.add_trial(p, m, no_interval);
  }
  const ResultsDb db(file.path, ResultsDb::Access::read_only);
  const auto rows = db.trials();
  ASSERT_EQ(rows.size(), 7u);
  const StopRule expected[] = {StopRule::converged, StopRule::max_steps, StopRule::time_cap,
                               StopRule::raced_out, StopRule::brief,     StopRule::interleaved};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(rows[i].figures.stop, expected[i]);
    EXPECT_EQ(rows[i].figures.eps_low, 987.5);
    EXPECT_EQ(rows[i].figures.eps_high, 1012.25);
    EXPECT_EQ(rows[i].figures.steps, 14);
  }
  EXPECT_FALSE(rows[6].figures.has_interval());
  EXPECT_EQ(result_of(rows[3], "cpu").figures.stop, StopRule::raced_out);
}

TEST(ResultsDbInterval, AFileWithoutTheColumnsReadsAndGetsThemOnAReadWriteOpen) {
  const test_support::TempResultsDb file("interval-older.sqlite");
  {
    ResultsDb db(file.path);
    db.add_trial(db.problem_id(kProblem), db.machine_id(kMachine),
                 timed("direct", StopRule::converged));
  }
  test_support::run_sql(
      file.path,
      "ALTER TABLE trials DROP COLUMN eps_low; ALTER TABLE trials DROP COLUMN eps_high; "
      "ALTER TABLE trials DROP COLUMN stop_rule");
  {
    const ResultsDb db(file.path, ResultsDb::Access::read_only);
    const auto rows = db.trials();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].figures.stop, StopRule::none);
    EXPECT_FALSE(rows[0].figures.has_interval());
    EXPECT_DOUBLE_EQ(rows[0].figures.median_eps, 1000);
  }
  {
    ResultsDb db(file.path);  // adds the columns
    db.add_trial(db.problem_id(kProblem), db.machine_id(kMachine),
                 timed("gemm", StopRule::raced_out));
  }
  const auto rows = ResultsDb(file.path, ResultsDb::Access::read_only).trials();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].figures.stop, StopRule::none);  // the older row keeps NULLs
  EXPECT_FALSE(rows[0].figures.has_interval());
  EXPECT_EQ(rows[1].figures.stop, StopRule::raced_out);
  EXPECT_EQ(rows[1].figures.eps_high, 1012.25);
}

TEST(ResultsDbInterval, AnUnknownStopRuleIsAnInputErrorNamingTheRow) {
  const test_support::TempResultsDb file("interval-bad.sqlite");
  {
    ResultsDb db(file.path);
    db.add_trial(db.problem_id(kProblem), db.machine_id(kMachine),
                 timed("direct", StopRule::converged));
  }
  test_support::run_sql(file.path, "UPDATE trials SET stop_rule = 'whenever'");
  try {
    ResultsDb(file.path, ResultsDb::Access::read_only).trials();
    FAIL() << "read a bad stop rule";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("trial 1: stop_rule"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("whenever"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunescope::tuner
