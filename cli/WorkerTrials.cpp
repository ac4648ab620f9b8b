// The worker-trial launcher and the `worker-trial` subcommand (cli/WorkerTrials.h).
#include "cli/WorkerTrials.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/base/Error.h"
#include "core/base/Ranks.h"
#include "core/tuner/IsolatedTrial.h"
#include "core/tuner/WorkerTrial.h"

namespace tunescope::cli {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> launcher_words() {
  std::vector<std::string> words;
  if (const char* env = std::getenv("TUNESCOPE_MPIRUN"); env && *env) {
    std::istringstream in(env);
    for (std::string word; in >> word;) words.push_back(word);
    return words;
  }
#ifdef TUNESCOPE_MPIEXEC
  // Unbound ranks, as a single process is: pinning a rank to a core another program is
  // busy on would measure that program (bench/run-ranks-bench.sh does the same).
  return {TUNESCOPE_MPIEXEC, "--bind-to", "none", "--oversubscribe"};
#else
  return {"mpirun", "--bind-to", "none", "--oversubscribe"};
#endif
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The last lines of the launcher's output, for a failure's reason.
std::string tail_of(const fs::path& log, size_t lines = 4) {
  std::string text = read_text(log);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  size_t at = text.size();
  for (size_t n = 0; n < lines && at != std::string::npos && at > 0; ++n)
    at = text.rfind('\n', at - 1);
  std::string tail = at == std::string::npos ? text : text.substr(at + 1);
  for (char& c : tail)
    if (c == '\n') c = '|';
  return tail.empty() ? "no output" : tail;
}

struct TempFolder {
  fs::path path;
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "tunescope-workers-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      fail(ErrorKind::runtime, "temporary folder ", pattern, ": ", std::strerror(errno));
    path = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

// Starts `argv` in a process group of its own (a Ctrl-C of the tune reaches the tune,
// which stops after this trial, not the ranks) that ends with the tune (PDEATHSIG), its
// output into `log`. Returns its pid.
pid_t start(const std::vector<std::string>& argv, const fs::path& log) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) fail(ErrorKind::runtime, "fork: ", std::strerror(errno));
  if (pid > 0) return pid;
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(127);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd >= 0) {
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
  }
  if (geteuid() == 0) {  // OpenMPI refuses root unless told twice (CI runs as root)
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
  _exit(127);
}

// Waits for `pid` until `seconds` (0: no limit) pass; then stops its group (SIGTERM,
// which mpirun passes to its ranks, then SIGKILL). Returns the wait status, or nullopt
// when it was stopped at the limit.
std::optional<int> wait_until(pid_t pid, double seconds) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, seconds > 0 ? WNOHANG : 0);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return 0;
    if (seconds > 0 && Clock::now() >= deadline) break;
    if (seconds > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(-pid, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return std::nullopt;
}

}  // namespace

void check_workers_launchable(const std::vector<std::string>& workers, const std::string& flag) {
  for (const std::string& value : workers) {
    if (value == "1") continue;
    if (!rank_runtime())
      fail(ErrorKind::usage, flag, " ", value,
           ": workers > 1 run as MPI ranks, and this tunescope was built without MPI "
           "(install libopenmpi-dev openmpi-bin and rebuild)");
    if (launcher_ranks().size > 0)
      fail(ErrorKind::usage, flag, " ", value, ": a tune started by a launcher (",
           launcher_ranks().variable,
           ") cannot start worker processes of its own: run the tune as one process");
  }
}

tuner::WorkerLauncher make_worker_launcher() {
  return [](const tuner::WorkerTrialRequest& request) {
    const int workers = tuner::workers_of(request.config);
    const TempFolder folder;
    const fs::path request_file = folder.path / "request.json",
                   result_file = folder.path / "result.json", log = folder.path / "launcher.log";
    {
      std::ofstream out(request_file, std::ios::binary);
      out << tuner::worker_trial_request_text(request);
      if (!out) fail(ErrorKind::runtime, "cannot write ", request_file.string());
    }
    std::vector<std::string> argv = launcher_words();
    for (const std::string& word :
         {std::string("-np"), std::to_string(workers), fs::read_symlink("/proc/self/exe").string(),
          std::string("worker-trial"), std::string("--request"), request_file.string(),
          std::string("--result"), result_file.string()})
      argv.push_back(word);
    const pid_t pid = start(argv, log);
    const std::optional<int> status = wait_until(pid, request.options.time_limit_seconds);
    // Rank 0 writes the result before anything may end the ranks: it is the word.
    if (fs::exists(result_file)) {
      std::vector<tuner::TrialResult> results =
          tuner::decode_trial_results(read_text(result_file), request.base.backend);
      if (results.size() == 1) return std::move(results.front());
    }
    if (!status)
      fail(ErrorKind::runtime, "over --trial-timeout ", request.options.time_limit_seconds,
           " s: its ", workers, " worker processes were stopped");
    fail(ErrorKind::runtime, "its ", workers, " worker processes (", argv.front(),
         ") ended without a result (",
         WIFEXITED(*status) ? cat("exit status ", WEXITSTATUS(*status))
                            : cat("signal ", WTERMSIG(*status)),
         "): ", tail_of(log));
  };
}

Action add_worker_trial_command(CLI::App& command) {
  auto request_path = std::make_shared<std::string>();
  auto result_path = std::make_shared<std::string>();
  command.add_option("--request", *request_path, "The trial's request (JSON)")->required();
  command.add_option("--result", *result_path, "Where rank 0 writes the result")->required();
  return [request_path, result_path] {
    Communicator* world = world_communicator();
    if (!world)
      fail(ErrorKind::usage, "worker-trial runs as the ranks of a launcher (mpirun -np N)");
    const tuner::WorkerTrialRequest request =
        tuner::parse_worker_trial_request(read_text(*request_path), *request_path);
    const tuner::TrialResult result = tuner::run_worker_trial(request, *world);
    if (world->rank() == 0) {
      const fs::path partial = *result_path + ".partial";
      {
        std::ofstream out(partial, std::ios::binary);
        out << tuner::encode_trial_results({result});
      }
      fs::rename(partial, *result_path);  // whole or absent: the launcher reads it any time
    } else if (result.status != tuner::TrialStatus::ok) {
      std::fprintf(stderr, "rank %d: %s\n", world->rank(), result.reason.c_str());
    }
    // A rank that stopped early (wrong numerics, a failure) leaves the others waiting in a
    // collective: end them all.
    if (result.status != tuner::TrialStatus::ok && world->size() > 1) world->abort(3);
  };
}

}  // namespace tunescope::cli
