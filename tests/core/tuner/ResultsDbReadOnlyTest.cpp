// Results DB in a read-only location: opening or writing fails with Error(input) naming
// the file, and the trials recorded before are intact. Root ignores file modes, so the
// attempt runs in a child process that drops to an unprivileged user when run as root.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "TempResultsDb.h"
#include "core/base/Error.h"
#include "core/tuner/ResultsDb.h"

namespace tunescope::tuner {
namespace {

using test_support::kMachine;
using test_support::kProblem;
using test_support::ok_trial;

namespace fs = std::filesystem;

struct Outcome {
  int code = -1;        // 0: Error(input) naming the file; 1: the write succeeded; 2: another error
  std::string message;  // what was thrown
};

// Runs `attempt` in a child without the privilege to write where root could.
template <typename Attempt>
Outcome in_unprivileged_child(const fs::path& named, Attempt attempt) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return {-1, "pipe failed"};
  const pid_t pid = fork();
  if (pid == 0) {
    close(pipe_fds[0]);
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    int code = 1;
    std::string message;
    try {
      attempt();
    } catch (const Error& e) {
      message = e.what();
      code =
          e.kind() == ErrorKind::input && message.find(named.string()) != std::string::npos ? 0 : 2;
    } catch (const std::exception& e) {
      message = e.what();
      code = 2;
    }
    if (write(pipe_fds[1], message.data(), message.size()) < 0) code = 4;
    _exit(code);
  }
  close(pipe_fds[1]);
  Outcome outcome;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
    outcome.message.append(buffer, n);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  outcome.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

struct ReadOnlyDir {
  fs::path dir = fs::temp_directory_path() / ("tunescope-readonly-" + std::to_string(getpid()));
  ReadOnlyDir() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~ReadOnlyDir() {
    fs::permissions(dir, fs::perms::owner_all);
    fs::remove_all(dir);
  }
  void lock(const fs::path& file) const {
    if (fs::exists(file))
      fs::permissions(file, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                             fs::perms::group_exec | fs::perms::others_read |
                             fs::perms::others_exec);
  }
};

TEST(ResultsDbReadOnly, WritingFailsNamingTheFileAndEarlierTrialsStay) {
  const ReadOnlyDir d;
  const fs::path path = d.dir / "results.sqlite";
  {
    ResultsDb db(path);
    const int64_t problem = db.problem_id(kProblem), machine = db.machine_id(kMachine);
    db.add_trial(problem, machine, ok_trial("direct"));
    db.add_trial(problem, machine, ok_trial("gemm"));
  }  // closing checkpoints the WAL into the file
  d.lock(path);

  const Outcome outcome = in_unprivileged_child(path, [&] {
    ResultsDb db(path);
    db.add_trial(db.problem_id(kProblem), db.machine_id(kMachine), ok_trial("fft-own"));
  });
  EXPECT_EQ(outcome.code, 0) << outcome.message;
  EXPECT_NE(outcome.message.find(path.string()), std::string::npos) << outcome.message;

  const ResultsDb db(path);
  const auto rows = db.trials();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NE(rows[0].config_json.find("direct"), std::string::npos);
  EXPECT_NE(rows[1].config_json.find("gemm"), std::string::npos);
}

TEST(ResultsDbReadOnly, CreatingInAReadOnlyFolderFailsNamingTheFile) {
  const ReadOnlyDir d;
  const fs::path path = d.dir / "new.sqlite";
  d.lock(path);
  const Outcome outcome = in_unprivileged_child(path, [&] { ResultsDb db(path); });
  EXPECT_EQ(outcome.code, 0) << outcome.message;
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace tunescope::tuner
