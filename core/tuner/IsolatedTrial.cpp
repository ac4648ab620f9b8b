// A trial in a forked child: the pipe, the shared step counter, the time limit, and the
// way back of the results (results-DB records as JSON, traces as Chrome trace files).
#include "core/tuner/IsolatedTrial.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/base/Error.h"
#include "core/tuner/TrialRecordFields.h"
#include "profiler/TraceFiles.h"

namespace tunescope::tuner {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// What the child needs from the parent and the parent cleans up: the pipe and a step
// counter in memory shared across the fork.
class ChildChannel {
 public:
  ChildChannel() {
    if (pipe2(fds_, O_CLOEXEC) != 0) fail(ErrorKind::runtime, "pipe: ", std::strerror(errno));
    void* shared = mmap(nullptr, sizeof(StepCounter), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
      close_read();
      close_write();
      fail(ErrorKind::runtime, "shared memory: ", std::strerror(errno));
    }
    steps_ = new (shared) StepCounter(0);
  }
  ~ChildChannel() {
    close_read();
    close_write();
    if (steps_) munmap(steps_, sizeof(StepCounter));
  }
  ChildChannel(const ChildChannel&) = delete;
  ChildChannel& operator=(const ChildChannel&) = delete;

  int read_fd() const { return fds_[0]; }
  int write_fd() const { return fds_[1]; }
  void close_read() { close_fd(fds_[0]); }
  void close_write() { close_fd(fds_[1]); }
  StepCounter& steps() { return *steps_; }

 private:
  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  int fds_[2] = {-1, -1};
  StepCounter* steps_ = nullptr;
};

void write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone or stopped reading: nobody to tell
    done += static_cast<size_t>(n);
  }
}

[[noreturn]] void run_child(pid_t parent, ChildChannel& channel, const ChildWork& work) {
  channel.close_read();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);  // the parent died before the line above
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  std::string message;
  try {
    message = encode_trial_results(work(channel.steps()));
  } catch (const std::exception& e) {
    message = nlohmann::json{{"error", e.what()}}.dump();
  }
  write_all(channel.write_fd(), message);
  _exit(0);
}

enum class ReadEnd { closed, deadline, error };

// Reads the child's message until it closes the pipe, the deadline passes, or reading
// fails (errno tells why).
ReadEnd read_until(int fd, std::optional<Clock::time_point> deadline, std::string& message) {
  char buffer[1 << 16];
  for (;;) {
    int timeout_ms = -1;
    if (deadline) {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return ReadEnd::deadline;
      timeout_ms = static_cast<int>(std::min<int64_t>(left, 1 << 30));
    }
    pollfd wait{fd, POLLIN, 0};
    const int ready = poll(&wait, 1, timeout_ms);
    if (ready < 0 && errno != EINTR) return ReadEnd::error;
    if (ready <= 0) continue;  // interrupted (a signal for the parent) or the deadline: look again
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return ReadEnd::error;
    if (n == 0) return ReadEnd::closed;
    message.append(buffer, static_cast<size_t>(n));
  }
}

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

// The results as JSON: each trial's results-DB record and the file of its trace, if it
// has one. The traces go to a temporary folder made only now, at the very end, so that
// a child killed while measuring leaves nothing behind; the parent removes it.
std::string encode_trial_results(const std::vector<TrialResult>& results) {
  nlohmann::json message{{"trials", nlohmann::json::array()}};
  fs::path folder;
  for (size_t i = 0; i < results.size(); ++i) {
    const TrialRecord r = record_of(results[i]);
    nlohmann::json trace = nullptr;
    if (results[i].trace) {
      if (folder.empty()) {
        std::string pattern = (fs::temp_directory_path() / "tunescope-trial-XXXXXX").string();
        if (!mkdtemp(pattern.data()))
          fail(ErrorKind::runtime, "temporary folder ", pattern, ": ", std::strerror(errno));
        folder = pattern;
        message["folder"] = folder.string();
      }
      const fs::path path = folder / cat("trace-", i, ".json");
      profiler::make_trace_writer(profiler::TraceFormat::chrome)->write(*results[i].trace, path);
      trace = path.string();
    }
    // The record the results DB stores (TrialRecordFields.h), and what only this
    // process needs besides: the step times, whether the check ran, the trace's file.
    nlohmann::json trial = record_to_json(r);
    trial["step_seconds"] = results[i].step_seconds;
    trial["turn_first_seconds"] = results[i].turn_first_seconds;
    trial["step_cpu_seconds"] = results[i].step_cpu_seconds;
    trial["numerics_checked"] = results[i].numerics_checked;
    trial["trace"] = trace;
    message["trials"].push_back(std::move(trial));
  }
  return message.dump();
}

std::vector<TrialResult> decode_trial_results(const std::string& message,
                                              const std::string& backend) {
  const nlohmann::json parsed = nlohmann::json::parse(message);
  struct RemoveFolder {
    fs::path folder;
    ~RemoveFolder() {
      std::error_code ignored;
      if (!folder.empty()) fs::remove_all(folder, ignored);
    }
  } traces{parsed.contains("folder") ? fs::path(parsed.at("folder").get<std::string>())
                                     : fs::path()};
  if (parsed.contains("error")) fail(ErrorKind::runtime, parsed.at("error").get<std::string>());
  std::vector<TrialResult> results;
  for (const auto& t : parsed.at("trials")) {
    const TrialRecord r = record_from_json(t, "the child process's trial");
    TrialResult result = result_of(r, backend);
    result.reused = false;
    result.numerics_checked = t.at("numerics_checked").get<bool>();
    result.step_seconds = t.at("step_seconds").get<std::vector<double>>();
    result.turn_first_seconds = t.at("turn_first_seconds").get<std::vector<double>>();
    result.step_cpu_seconds = t.at("step_cpu_seconds").get<std::vector<double>>();
    if (!t.at("trace").is_null())
      result.trace = std::make_shared<const profiler::Trace>(
          profiler::read_trace_file(t.at("trace").get<std::string>()));
    results.push_back(std::move(result));
  }
  return results;
}

std::string signal_description(int signal) {
  const char* abbreviation = sigabbrev_np(signal);
  const std::string name = abbreviation ? cat("SIG", abbreviation) : cat("signal ", signal);
  return cat(name, " (", strsignal(signal), ")");
}

ChildOutcome run_in_child(const std::string& backend, ChildTimeLimit limit, const ChildWork& work) {
  const auto start = Clock::now();
  std::optional<ChildChannel> channel;
  try {
    channel.emplace();
  } catch (const Error& e) {
    return {{}, cat("could not prepare a child process: ", e.what())};
  }
  std::fflush(nullptr);  // what the parent buffered must not be written twice
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return {{}, cat("could not start a child process: fork: ", std::strerror(errno))};
  if (pid == 0) run_child(parent, *channel, work);

  channel->close_write();
  std::optional<Clock::time_point> deadline;
  if (limit.seconds > 0)
    deadline = start + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(limit.seconds * limit.trials));
  std::string message;
  const ReadEnd end = read_until(channel->read_fd(), deadline, message);
  const std::string read_error = end == ReadEnd::error ? std::strerror(errno) : "";
  if (end != ReadEnd::closed) kill(pid, SIGKILL);
  const int status = wait_for(pid);
  const int64_t steps = channel->steps().load();
  if (end == ReadEnd::deadline)
    return {{},
            cat(time_limit_reason(limit.seconds, steps, limit.trials),
                "; its child process was killed")};
  if (end == ReadEnd::error)
    return {{}, cat("lost its child process's result (", read_error, "); the child was killed")};
  if (WIFSIGNALED(status))
    return {{},
            cat("crashed: its child process was killed by ", signal_description(WTERMSIG(status)),
                " after ", steps_text(steps))};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return {{},
            cat("its child process exited with status ", WEXITSTATUS(status),
                " without a result after ", steps_text(steps))};
  try {
    return {decode_trial_results(message, backend), ""};
  } catch (const std::exception& e) {
    return {{}, cat("its child process sent no usable result: ", e.what())};
  }
}

}  // namespace tunescope::tuner
