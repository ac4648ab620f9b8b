// Runs the built `tunescope` binary with arguments, as a user would, for the CLI tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace tunescope::testing {

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

}  // namespace tunescope::testing
