// Several writers on one results DB (two tunes started together, the CLI beside the
// GUI's Run tab): each opens or creates the same file, possibly at the same moment, and
// commits its trials; none fails, every trial is there once, and the schema is created
// once. A writer that cannot get the lock within its busy timeout fails with a message
// naming the file and saying it stayed locked, instead of waiting for ever.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "TempResultsDb.h"
#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/tuner/ResultsDb.h"

namespace tunescope::tuner {
namespace {

constexpr int kWriters = 3;
constexpr int kTrialsPerWriter = 4;

TrialResult trial(int writer, int index) {
  TrialResult t;
  t.config.batch = 8;
  knobs::threads.set(t.config.knobs, writer + 1);  // as two tunes with different thread lists
  t.config.conv.default_algorithm = index % 2 ? "gemm" : "direct";
  t.status = TrialStatus::ok;
  t.figures = {5, 1000.0 + index, 8, 7, 0.01};
  return t;
}

// What one tune does with the DB: open (creating it when missing), find its rows, add
// its trials one transaction each. Returns the error message, empty on success.
std::string write_as_a_tune(const std::filesystem::path& path, int writer) {
  try {
    ResultsDb db(path);
    const int64_t m = db.machine_id({"Test CPU", 4, "cpu", "OpenBLAS x"});
    const int64_t p = db.problem_id({writer % 2 ? "lenet5" : "resnet8", "1x32x32", 8});
    for (int i = 0; i < kTrialsPerWriter; ++i) db.add_trial(p, m, trial(writer, i));
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

// The file as the writers left it: every trial once, per writer.
void expect_all_trials(const std::filesystem::path& path) {
  const ResultsDb db(path, ResultsDb::Access::read_only);
  const std::vector<TrialRecord> rows = db.trials();
  ASSERT_EQ(rows.size(), size_t{kWriters * kTrialsPerWriter});
  for (int w = 0; w < kWriters; ++w) {
    const std::string threads = "\"threads\": " + std::to_string(w + 1);
    int found = 0;
    for (const TrialRecord& r : rows) found += r.config_json.find(threads) != std::string::npos;
    EXPECT_EQ(found, kTrialsPerWriter) << "writer " << w;
  }
  EXPECT_EQ(db.tuned_pairs().size(), 2u);  // two problems on one machine
}

std::string unique_name(const std::string& what, int round) {
  return "shared-writers-" + what + "-" + std::to_string(getpid()) + "-" + std::to_string(round) +
         ".sqlite";
}

// Starts every writer at once (a barrier, so they race on creating the file).
TEST(ResultsDbSharedWriters, ThreadsCreatingOneNewDbAllCommitTheirTrials) {
  for (int round = 0; round < 20; ++round) {
    const test_support::TempResultsDb file(unique_name("threads", round));
    std::mutex mutex;
    std::condition_variable go;
    int ready = 0;
    std::vector<std::string> errors(kWriters);
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w)
      writers.emplace_back([&, w] {
        {
          std::unique_lock lock(mutex);
          if (++ready == kWriters) go.notify_all();
          go.wait(lock, [&] { return ready == kWriters; });
        }
        errors[w] = write_as_a_tune(file.path, w);
      });
    for (auto& t : writers) t.join();
    for (int w = 0; w < kWriters; ++w)
      ASSERT_EQ(errors[w], "") << "round " << round << ", writer " << w;
    expect_all_trials(file.path);
  }
}

// Separate processes, as two `tunescope tune` runs: SQLite's locks between processes
// are POSIX advisory locks, not the in-process table the threads above share.
TEST(ResultsDbSharedWriters, ProcessesCreatingOneNewDbAllCommitTheirTrials) {
  for (int round = 0; round < 20; ++round) {
    const test_support::TempResultsDb file(unique_name("processes", round));
    int start[2];
    ASSERT_EQ(pipe(start), 0);
    std::vector<pid_t> children;
    std::vector<std::string> error_files;
    for (int w = 0; w < kWriters; ++w) {
      error_files.push_back(file.path.string() + ".error" + std::to_string(w));
      const pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        close(start[1]);
        char go = 0;
        (void)!read(start[0], &go, 1);  // released together when the parent closes the pipe
        const std::string error = write_as_a_tune(file.path, w);
        if (!error.empty()) std::ofstream(error_files.back()) << error;
        _exit(error.empty() ? 0 : 2);
      }
      children.push_back(pid);
    }
    close(start[0]);
    close(start[1]);
    for (int w = 0; w < kWriters; ++w) {
      int status = 0;
      ASSERT_EQ(waitpid(children[w], &status, 0), children[w]);
      std::string error;
      if (std::ifstream in(error_files[w]); in) std::getline(in, error);
      std::remove(error_files[w].c_str());
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << "round " << round << ", writer " << w << ": " << error;
    }
    expect_all_trials(file.path);
  }
}

// Another connection holds the write lock for a while, then lets go: the trial waits
// for it and is committed.
TEST(ResultsDbSharedWriters, AWriterWaitsForALockHeldElsewhere) {
  const test_support::TempResultsDb file(unique_name("wait", 0));
  ResultsDb db(file.path);
  const int64_t m = db.machine_id({"Test CPU", 4, "cpu", "OpenBLAS x"});
  const int64_t p = db.problem_id({"lenet5", "1x32x32", 8});
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(file.path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr);
  });
  EXPECT_NO_THROW(db.add_trial(p, m, trial(0, 0)));
  release.join();
  sqlite3_close(other);
  EXPECT_EQ(db.trials().size(), 1u);
}

// A lock that outlasts the busy timeout: a clear error naming the file, not a hang and
// not SQLite's bare "database is locked".
TEST(ResultsDbSharedWriters, ALockHeldPastTheTimeoutFailsNamingTheFile) {
  const test_support::TempResultsDb file(unique_name("timeout", 0));
  ResultsDb db(file.path, ResultsDb::Access::read_write, std::chrono::milliseconds(200));
  const int64_t m = db.machine_id({"Test CPU", 4, "cpu", "OpenBLAS x"});
  const int64_t p = db.problem_id({"lenet5", "1x32x32", 8});
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(file.path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  try {
    db.add_trial(p, m, trial(0, 0));
    ADD_FAILURE() << "a trial was written while another connection held the lock";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(message.find(file.path.string()), std::string::npos) << message;
    EXPECT_NE(message.find("locked by another writer"), std::string::npos) << message;
  }
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  db.add_trial(p, m, trial(0, 1));  // the connection is usable again
  EXPECT_EQ(db.trials().size(), 1u);
}

}  // namespace
}  // namespace tunescope::tuner
