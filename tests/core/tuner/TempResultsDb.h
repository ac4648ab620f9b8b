// A results DB path in the temp folder, removed with SQLite's WAL files before and
// after a test; declared before the ResultsDb that uses it, so it outlives the DB. And
// the other helpers of the results-DB tests.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "core/tuner/Measurement.h"
#include "core/tuner/ResultsDb.h"

namespace tunescope::tuner::test_support {

struct TempResultsDb {
  std::filesystem::path path;
  explicit TempResultsDb(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("tunescope-" + name)) {
    remove();
  }
  ~TempResultsDb() { remove(); }
  TempResultsDb(const TempResultsDb&) = delete;
  TempResultsDb& operator=(const TempResultsDb&) = delete;
  void remove() const {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
  }
};

// The machine and problem the results-DB tests record their trials under.
inline const MachineSignature kMachine{"Test CPU", 2, "cpu", "OpenBLAS x"};
inline const ProblemKey kProblem{"lenet5", "1x32x32", 8};

// An ok trial of a config of one algorithm at batch 8 with plain figures.
inline TrialResult ok_trial(const std::string& algorithm = "direct") {
  TrialResult t;
  t.config.batch = 8;
  t.config.conv.default_algorithm = algorithm;
  t.status = TrialStatus::ok;
  t.figures = {5, 1000, 8, 7, 0.01};
  return t;
}

// Runs `statement` on the file through SQLite's C API, as another program would.
inline void run_sql(const std::filesystem::path& path, const char* statement) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, statement, nullptr, nullptr, &message);
  const std::string why = message ? message : "";
  sqlite3_free(message);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << statement << ": " << why;
}

}  // namespace tunescope::tuner::test_support
