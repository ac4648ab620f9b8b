// The trials' concurrency columns: stored and read back (NULL for a trial without
// figures), and a results DB written before the columns existed still opens: the
// columns are added, its rows read without concurrency, and new rows carry it.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "TempResultsDb.h"
#include "core/tuner/ResultsDb.h"

namespace tunescope::tuner {
namespace {

using test_support::kMachine;
using test_support::kProblem;

TrialResult trial(const std::string& algorithm, std::optional<ConcurrencyFigures> concurrency) {
  TrialResult t;
  t.config.batch = 8;
  t.config.conv.default_algorithm = algorithm;
  t.status = TrialStatus::ok;
  t.figures = {5, 1000, 8, 7, 0.01};
  t.concurrency = concurrency;
  return t;
}

// What the first schema's build wrote: no concurrency columns.
const char* kFirstSchemaFile = R"sql(
PRAGMA application_id = 1414742864;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE machines (
  id INTEGER PRIMARY KEY, cpu TEXT NOT NULL, cores INTEGER NOT NULL, backend TEXT NOT NULL,
  backend_description TEXT NOT NULL, UNIQUE (cpu, cores, backend, backend_description));
CREATE TABLE problems (
  id INTEGER PRIMARY KEY, model TEXT NOT NULL, input_shape TEXT NOT NULL, batch INTEGER NOT NULL,
  UNIQUE (model, input_shape, batch));
CREATE TABLE trials (
  id INTEGER PRIMARY KEY, problem_id INTEGER NOT NULL REFERENCES problems(id),
  machine_id INTEGER NOT NULL REFERENCES machines(id), config TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok', 'invalid', 'failed', 'skipped')), reason TEXT NOT NULL,
  median_eps REAL, median_step_ms REAL, min_step_ms REAL, spread REAL, steps INTEGER NOT NULL,
  kernels TEXT NOT NULL, created_at TEXT NOT NULL);
INSERT INTO meta VALUES ('schema_version', '1'), ('created_at', '2026-11-30T10:00:00Z');
INSERT INTO machines VALUES (1, 'Test CPU', 2, 'cpu', 'OpenBLAS x');
INSERT INTO problems VALUES (1, 'lenet5', '1x32x32', 8);
INSERT INTO trials VALUES (1, 1, 1, '{"schema": "tunescope.config/1", "model": "lenet5", "batch": 8, "layout": "nchw",
  "conv": {"default": "direct"}, "threads": 1}', 'ok', '', 2000, 4, 3.5, 0.05, 5, '[]', '2026-11-30T10:00:01Z');
)sql";

TEST(ResultsDbConcurrency, RoundTripsAndStaysEmptyWhenUnknown) {
  test_support::TempResultsDb file("results-concurrency.sqlite");
  {
    ResultsDb db(file.path);
    const int64_t p = db.problem_id(kProblem), m = db.machine_id(kMachine);
    db.add_trial(p, m, trial("gemm", ConcurrencyFigures{0.375, 1.4375}));
    db.add_trial(p, m, trial("direct", std::nullopt));
  }
  const auto rows = ResultsDb(file.path).trials();
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_TRUE(rows[0].concurrency);
  EXPECT_EQ(*rows[0].concurrency, (ConcurrencyFigures{0.375, 1.4375}));
  EXPECT_FALSE(rows[1].concurrency);
  EXPECT_EQ(result_of(rows[0], "cpu").concurrency, rows[0].concurrency);
}

TEST(ResultsDbConcurrency, AFileOfTheFirstSchemaOpensAndGainsTheColumns) {
  test_support::TempResultsDb file("results-first-schema.sqlite");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(file.path.c_str(), &raw), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(raw, kFirstSchemaFile, nullptr, nullptr, &message);
  const std::string why = message ? message : "";
  sqlite3_free(message);
  sqlite3_close(raw);
  ASSERT_EQ(rc, SQLITE_OK) << why;

  {
    ResultsDb db(file.path);
    const auto old_rows = db.trials();
    ASSERT_EQ(old_rows.size(), 1u);
    EXPECT_DOUBLE_EQ(old_rows[0].figures.median_eps, 2000);
    EXPECT_FALSE(old_rows[0].concurrency);
    db.add_trial(db.problem_id(kProblem), db.machine_id(kMachine),
                 trial("gemm", ConcurrencyFigures{0.5, 1.5}));
  }
  const auto rows = ResultsDb(file.path).trials();  // opens again: the columns are there now
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].problem_id, rows[0].problem_id);
  ASSERT_TRUE(rows[1].concurrency);
  EXPECT_EQ(*rows[1].concurrency, (ConcurrencyFigures{0.5, 1.5}));
}

}  // namespace
}  // namespace tunescope::tuner
