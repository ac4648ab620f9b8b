// Runs the built `tunescope` binary with arguments, as a user would, for the CLI tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace tunescope::test_support {

struct CliResult {
  int exit_code;
  std::string output;  // stdout and stderr
};

// A shell command line, its exit code and output (stdout and stderr).
inline CliResult run_command(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, "popen failed for: " + command};
  std::string output;
  std::array<char, 4096> buffer;
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

inline CliResult run_cli(const std::string& args) {
  return run_command(std::string(TUNESCOPE_CLI_PATH) + " " + args);
}

// Whether the command's output holds `text`.
inline bool has(const CliResult& r, const std::string& text) {
  return r.output.find(text) != std::string::npos;
}

// A `train` and a `tune` of lenet5 on 32 fake examples at one thread: the shortest runs
// that still take a few steps.
inline constexpr const char* kSmallFakeTrain =
    "--data fake --fake-count 32 --batch 16 --threads 1 --test-limit 16";
inline constexpr const char* kSmallFakeTune =
    "--data fake --fake-count 32 --batch 16 --threads-list 1";

}  // namespace tunescope::test_support
