// `tunescope tune` stopped by a signal, as a user's Ctrl-C or a killed laptop session
// would: the tune runs as a child process on tiny fake data and the test watches the
// results DB until a trial is committed, then signals it. SIGINT prints the best-so-far
// table and exits 130 with every finished trial in the DB and no tuned config; SIGKILL
// loses no committed trial; `--resume` then completes the tune without measuring any
// config twice, over the same configs as an uninterrupted tune. (Winners are not
// compared here: the real algorithms' speeds are too close for a noisy machine; the
// deterministic winner comparison is in tests/core/tuner/TunerResumeTest.cpp.)
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli/RunCli.h"
#include "tests/cli/TestFolder.h"
#include "tests/cli/TinyTuneArgs.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using tunescope::test_support::ScratchDir;

// 2 layouts x 4 algorithms x 2 thread counts (some skipped) with enough timed steps
// that the sweep lasts well beyond the moment the test signals it. Exhaustive: its
// candidates do not depend on timings, so the resumed and the fresh tune share them.
std::vector<std::string> tune_args(const std::string& db, const std::string& out) {
  std::vector<std::string> args = tunescope::test_support::tiny_lenet5_tune_args();
  args.insert(args.end(),
              {"--algorithms", "direct,gemm,fft-fftw,fft-own", "--threads-list", "1,2", "--steps",
               "12", "--warmup", "1", "--strategy", "exhaustive", "--db", db, "-o", out});
  return args;
}

std::string joined(const std::vector<std::string>& args) {
  std::string text;
  for (const auto& a : args) text += (text.empty() ? "" : " ") + a;
  return text;
}

// The CLI as a child process with stdout and stderr going to `log`.
pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* out = std::freopen(log.c_str(), "w", stdout);
    if (!out || dup2(fileno(stdout), STDERR_FILENO) < 0) _exit(127);
    std::vector<char*> argv{const_cast<char*>(TUNESCOPE_CLI_PATH)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(TUNESCOPE_CLI_PATH, argv.data());
    _exit(127);
  }
  return pid;
}

struct Row {
  std::string config;
  std::string status;
  std::string reason;
};

// The trials committed so far, read as another process would (empty while the DB or
// its schema does not exist yet).
std::vector<Row> committed_trials(const std::string& path) {
  std::vector<Row> rows;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT config, status, reason FROM trials ORDER BY id", -1, &stmt,
                           nullptr) == SQLITE_OK) {
      auto text = [&](int col) {
        return std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, col)));
      };
      while (sqlite3_step(stmt) == SQLITE_ROW) rows.push_back({text(0), text(1), text(2)});
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return rows;
}

// Polls the DB until `count` trials are committed or the child ends; true on the former.
bool wait_for_trials(pid_t pid, const std::string& db, size_t count) {
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (committed_trials(db).size() >= count) return true;
    if (waitpid(pid, nullptr, WNOHANG) == pid) return false;
    std::this_thread::sleep_for(2ms);
  }
  return false;
}

// The exit code, or minus the signal that killed the child (so that dying of SIGINT
// cannot pass for a clean exit with 130).
int exit_status(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return -1000;
}

// Sweep rows (not the interleaved re-measurement) per config.
std::map<std::string, int> sweep_configs(const std::vector<Row>& rows) {
  std::map<std::string, int> configs;
  for (const Row& r : rows)
    if (r.reason.rfind("interleaved re-measurement", 0) != 0) ++configs[r.config];
  return configs;
}

size_t table_rows(const std::string& output) {
  size_t rows = 0;
  for (size_t at = output.find("\n| "); at != std::string::npos; at = output.find("\n| ", at + 1))
    if (output.compare(at + 3, 2, "# ") != 0) ++rows;  // not the header
  return rows;
}

// Resumes the tune in `db` and checks it completes measuring only what was missing,
// over the same configs as the uninterrupted tune in `fresh_db`.
void expect_resume_completes(const ScratchDir& d, const std::string& db,
                             const std::string& fresh_db) {
  const auto before = committed_trials(db);
  const tunescope::test_support::CliResult resumed =
      tunescope::test_support::run_cli(joined(tune_args(db, d.at("resumed.json"))) + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find(std::to_string(sweep_configs(before).size()) + " trials reused"),
            std::string::npos)
      << resumed.output;
  EXPECT_NE(resumed.output.find("winner:"), std::string::npos) << resumed.output;
  EXPECT_TRUE(fs::exists(d.at("resumed.json")));

  const auto after = committed_trials(db);
  // The interrupted run's rows are still there, unchanged and first.
  ASSERT_GE(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i].config, before[i].config) << i;
  const auto configs = sweep_configs(after);
  for (const auto& [config, count] : configs) EXPECT_EQ(count, 1) << "measured twice: " << config;
  EXPECT_EQ(configs, sweep_configs(committed_trials(fresh_db)));
}

TEST(TuneInterrupt, SigintPrintsBestSoFarExits130AndResumeCompletes) {
  const ScratchDir d;
  const tunescope::test_support::CliResult fresh =
      tunescope::test_support::run_cli(joined(tune_args(d.at("fresh.sqlite"), d.at("fresh.json"))));
  ASSERT_EQ(fresh.exit_code, 0) << fresh.output;
  const size_t candidates = sweep_configs(committed_trials(d.at("fresh.sqlite"))).size();
  ASSERT_GE(candidates, 10u);

  const std::string db = d.at("results.sqlite");
  const pid_t pid = spawn(tune_args(db, d.at("tuned.json")), d.at("tune.log"));
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_for_trials(pid, db, 1)) << tunescope::test_support::file_bytes(d.at("tune.log"));
  kill(pid, SIGINT);
  const int code = exit_status(pid);
  const std::string output = tunescope::test_support::file_bytes(d.at("tune.log"));
  ASSERT_EQ(code, 130) << output;

  EXPECT_NE(output.find("interrupted: best so far: "), std::string::npos) << output;
  EXPECT_NE(output.find("(best)"), std::string::npos) << output;
  EXPECT_NE(output.find("continue with --resume"), std::string::npos) << output;
  EXPECT_EQ(output.find("winner:"), std::string::npos) << output;
  // A partial tune leaves no file that looks like a result.
  EXPECT_FALSE(fs::exists(d.at("tuned.json")));

  // Every trial the table shows is committed, and the sweep did stop early.
  const auto rows = committed_trials(db);
  EXPECT_GE(rows.size(), 1u);
  EXPECT_LT(rows.size(), candidates);
  EXPECT_EQ(table_rows(output), rows.size()) << output;
  for (const Row& r : rows)
    EXPECT_EQ(r.reason.rfind("interleaved", 0), std::string::npos) << r.reason;

  expect_resume_completes(d, db, d.at("fresh.sqlite"));
}

TEST(TuneInterrupt, SigkillLosesNoCommittedTrialAndResumeCompletes) {
  const ScratchDir d;
  const tunescope::test_support::CliResult fresh =
      tunescope::test_support::run_cli(joined(tune_args(d.at("fresh.sqlite"), d.at("fresh.json"))));
  ASSERT_EQ(fresh.exit_code, 0) << fresh.output;

  const std::string db = d.at("results.sqlite");
  const pid_t pid = spawn(tune_args(db, d.at("tuned.json")), d.at("tune.log"));
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_for_trials(pid, db, 2)) << tunescope::test_support::file_bytes(d.at("tune.log"));
  const auto seen = committed_trials(db);
  kill(pid, SIGKILL);
  EXPECT_EQ(exit_status(pid), -SIGKILL);

  // Everything committed before the kill is still there (the WAL is replayed on open).
  const auto rows = committed_trials(db);
  ASSERT_GE(rows.size(), seen.size());
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(rows[i].config, seen[i].config) << i;
  EXPECT_FALSE(fs::exists(d.at("tuned.json")));

  expect_resume_completes(d, db, d.at("fresh.sqlite"));
}

TEST(TuneInterrupt, ResumeWithoutDbExitsTwo) {
  const ScratchDir d;
  const tunescope::test_support::CliResult r = tunescope::test_support::run_cli(
      "tune --model lenet5 --data fake --fake-count 64 --batch 8 --resume -o " + d.at("t.json"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--resume needs --db"), std::string::npos) << r.output;
}

}  // namespace
