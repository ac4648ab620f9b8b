// Bad results DBs given to `tunescope tune --db`: an SQLite database of another program,
// a tunescope DB of a newer schema, a location that cannot be written, and a disk that
// fills up mid-tune (RLIMIT_FSIZE in the child before exec, SIGXFSZ ignored, so writes
// fail with EFBIG as on a full disk). Each exits non-zero naming the DB and the problem;
// the refused files are byte-identical afterwards and no tuned config is written; on the
// full disk the trials committed before are intact. (A file that is not SQLite:
// tests/cli/TuneCliTest.cpp; the DB class's own cases: tests/core/tuner/ResultsDb*Test.cpp.)
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <vector>

#include "tests/cli/errors/ErrorCase.h"

namespace tunescope::test_support {
namespace {

const std::string kBothLayoutsTune =
    "tune --data fake --fake-count 32 --batch 8 --test-limit 16 --layouts nchw,nhwc "
    "--algorithms direct,gemm --steps 1 --warmup 0";

int64_t count_rows(const std::string& path, const std::string& table) {
  sqlite3* db = nullptr;
  int64_t rows = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, ("SELECT count(*) FROM " + table).c_str(), -1, &stmt, nullptr) ==
            SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW)
      rows = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return rows;
}

TEST(ResultsDbErrors, SqliteOfAnotherProgram) {
  const ScratchDir folder;
  run_sql(folder.at("places.sqlite"),
          "CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT);"
          "INSERT INTO moz_places(url) VALUES ('https://example.org');");
  expect_error(
      folder.path(),
      {kBothLayoutsTune + " --db " + folder.at("places.sqlite") + " -o " + folder.at("tuned.json"),
       {folder.at("places.sqlite"), "another application", "not a tunescope results DB"}});
}

TEST(ResultsDbErrors, NewerSchemaVersion) {
  const ScratchDir folder;
  const std::string db = folder.at("results.sqlite");
  const CliResult first =
      run_cli(kBothLayoutsTune + " --db " + db + " -o " + folder.at("first.json"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  run_sql(
      db,
      "UPDATE meta SET value = '2' WHERE key = 'schema_version'; PRAGMA wal_checkpoint(TRUNCATE);");
  fs::remove(db + "-wal");
  fs::remove(db + "-shm");
  expect_error(folder.path(), {kBothLayoutsTune + " --db " + db + " -o " + folder.at("tuned.json"),
                               {db, "schema version '2'", "this build reads 1"}});
}

TEST(ResultsDbErrors, LocationThatCannotBeWritten) {
  // /proc refuses new files even to root, for whom file modes are no obstacle.
  const ScratchDir folder;
  expect_error(folder.path(), {kBothLayoutsTune + " --db /proc/tunescope-results.sqlite -o " +
                                   folder.at("tuned.json"),
                               {"/proc/tunescope-results.sqlite", "cannot open"}});
}

// The CLI with files limited to `max_file_bytes`, output to `log`; returns the exit code
// (or minus the signal).
int run_with_file_size_limit(const std::string& args, rlim_t max_file_bytes,
                             const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const rlimit limit{max_file_bytes, max_file_bytes};
    std::signal(SIGXFSZ, SIG_IGN);  // writes past the limit fail with EFBIG instead of killing
    if (!std::freopen(log.c_str(), "w", stdout) || dup2(fileno(stdout), STDERR_FILENO) < 0 ||
        setrlimit(RLIMIT_FSIZE, &limit) != 0)
      _exit(127);
    execl("/bin/sh", "sh", "-c", (std::string(TUNESCOPE_CLI_PATH) + " " + args).c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

TEST(ResultsDbErrors, DiskFullMidTuneKeepsEarlierTrials) {
  const ScratchDir folder;
  const std::string db = folder.at("results.sqlite");
  // The DB is created (a few 4 KiB pages) and the first trials commit to its write-ahead
  // log; the log outgrows 64 KiB after a few of the 10 trials (each commits its pages anew).
  const fs::path log = fs::temp_directory_path() / (folder.path().filename().string() + ".log");
  const int code = run_with_file_size_limit(
      kBothLayoutsTune + " --threads-list 1,2 --db " + db + " -o " + folder.at("tuned.json"),
      64 * 1024, log.string());
  const std::string output = file_bytes(log);
  fs::remove(log);
  EXPECT_NE(code, 0) << output;
  EXPECT_GT(code, 0) << "killed by a signal instead of exiting:\n" << output;
  // SQLite reports EFBIG as an I/O error (a real full disk as "database or disk is full").
  EXPECT_NE(output.find("error: results DB " + db + ": disk I/O error"), std::string::npos)
      << output;
  EXPECT_EQ(output.find("terminate called"), std::string::npos) << output;
  EXPECT_FALSE(fs::exists(folder.at("tuned.json")));
  // Read without the limit, the DB holds the trials committed before the disk filled.
  const int64_t trials = count_rows(db, "trials");
  EXPECT_GE(trials, 1) << output;
  EXPECT_LT(trials, 10) << "the limit never bit:\n" << output;
}

}  // namespace
}  // namespace tunescope::test_support
