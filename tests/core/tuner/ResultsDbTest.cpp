// Results DB: round trip, refusal of non-SQLite and foreign SQLite files (naming them),
// trials surviving a SIGKILL of the writing process, reuse of problem/machine rows.
#include "core/tuner/ResultsDb.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "TempResultsDb.h"
#include "core/base/Error.h"

namespace tunescope::tuner {
namespace {

using test_support::kMachine;
using test_support::kProblem;

namespace fs = std::filesystem;

struct TempDb {
  fs::path path;
  explicit TempDb(const std::string& name)
      : path(fs::temp_directory_path() / ("tunescope-" + name)) {
    remove();
  }
  ~TempDb() { remove(); }
  void remove() const {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
  }
};

TrialResult trial(const std::string& algorithm, TrialStatus status, double eps) {
  TrialResult t;
  t.config.batch = 8;
  t.config.conv.default_algorithm = algorithm;
  t.status = status;
  t.reason = status == TrialStatus::ok ? "" : "because " + algorithm;
  t.figures = {5, eps, 8000 / eps, 7000 / eps, 0.04};
  t.kernels = {{"gemm.fwd", 10, 1.5, 42.0}};
  return t;
}

void expect_input_error_naming(const fs::path& path, const std::string& what) {
  try {
    ResultsDb db(path);
    FAIL() << "opened " << path;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(ResultsDb, TrialsRoundTripAcrossReopen) {
  TempDb file("results-roundtrip.sqlite");
  {
    ResultsDb db(file.path);
    const int64_t problem = db.problem_id(kProblem);
    const int64_t machine = db.machine_id(kMachine);
    EXPECT_EQ(db.problem_id(kProblem), problem);  // same problem, same row
    EXPECT_EQ(db.machine_id(kMachine), machine);
    EXPECT_NE(db.problem_id({"lenet5", "1x32x32", 16}), problem);
    db.add_trial(problem, machine, trial("gemm", TrialStatus::ok, 4000));
    db.add_trial(problem, machine, trial("test-wrong", TrialStatus::invalid, 0));
  }
  ResultsDb db(file.path);
  const auto rows = db.trials();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, TrialStatus::ok);
  EXPECT_DOUBLE_EQ(rows[0].figures.median_eps, 4000);
  EXPECT_DOUBLE_EQ(rows[0].figures.spread, 0.04);
  EXPECT_EQ(rows[0].figures.steps, 5);
  EXPECT_EQ(run_config_from_json_text(rows[0].config_json, "row").conv.default_algorithm, "gemm");
  EXPECT_NE(rows[0].kernels_json.find("gemm.fwd"), std::string::npos);
  EXPECT_EQ(rows[1].status, TrialStatus::invalid);
  EXPECT_EQ(rows[1].reason, "because test-wrong");
  EXPECT_FALSE(rows[1].created_at.empty());
  EXPECT_EQ(db.trials(rows[0].problem_id).size(), 2u);
  EXPECT_EQ(db.trials(rows[0].problem_id + 100).size(), 0u);
}

TEST(ResultsDb, RefusesAFileThatIsNotSqlite) {
  TempDb file("results-not-sqlite.sqlite");
  std::ofstream(file.path)
      << "this is a text file, long enough to have a header of its own........\n";
  expect_input_error_naming(file.path, "not a database");
}

TEST(ResultsDb, RefusesAnotherApplicationsSqliteDb) {
  TempDb file("results-foreign.sqlite");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE songs (title TEXT)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  expect_input_error_naming(file.path, "not a tunescope results DB");
}

TEST(ResultsDb, FinishedTrialsSurviveAKilledWriter) {
  TempDb file("results-killed.sqlite");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child records two trials, opens a third transaction and dies mid-way.
    ResultsDb db(file.path);
    const int64_t p = db.problem_id(kProblem), m = db.machine_id(kMachine);
    db.add_trial(p, m, trial("direct", TrialStatus::ok, 3000));
    db.add_trial(p, m, trial("test-throws", TrialStatus::failed, 0));
    sqlite3* raw = nullptr;
    sqlite3_open(file.path.c_str(), &raw);
    sqlite3_exec(
        raw,
        "BEGIN IMMEDIATE; INSERT INTO problems(model, input_shape, batch) VALUES ('x', 'y', 1);",
        nullptr, nullptr, nullptr);
    raise(SIGKILL);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  ResultsDb db(file.path);
  const auto rows = db.trials();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, TrialStatus::ok);
  EXPECT_EQ(rows[1].status, TrialStatus::failed);
  EXPECT_EQ(db.problem_id(kProblem), rows[0].problem_id);
}

}  // namespace
}  // namespace tunescope::tuner
