// A one-line terminal progress bar with rate and ETA, redrawn in place on a TTY and
// printed every ~10% otherwise (so CI logs stay short).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tunescope::cli {

class ProgressBar {
 public:
  ProgressBar(std::string label, int64_t total, std::FILE* out = stderr);
  // Shows `done` of total with a free-form status such as "loss 0.412  9.8k ex/s".
  void update(int64_t done, const std::string& status);
  // The same with part of an item done (a tune's interleaved rounds under way).
  void update_partial(double done, const std::string& status);
  // A new total (a tune's strategy may plan anew as it goes); at least 1.
  void set_total(int64_t total);
  // Ends the line (leaves the final state visible).
  void finish(const std::string& status);

 private:
  void draw(double done, const std::string& status, bool final);

  std::string label_;
  int64_t total_;
  std::FILE* out_;
  bool tty_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
};

// "1.2 s", "3 min 04 s"
std::string format_duration(double seconds);

}  // namespace tunescope::cli
