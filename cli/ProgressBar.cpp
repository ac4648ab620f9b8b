#include "cli/ProgressBar.h"

#include "core/base/Ranks.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace tunescope::cli {

std::string format_duration(double seconds) {
  char text[32];
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 60) {
    std::snprintf(text, sizeof text, "%.1f s", seconds);
  } else {
    const auto whole = static_cast<long>(seconds);
    std::snprintf(text, sizeof text, "%ld min %02ld s", whole / 60, whole % 60);
  }
  return text;
}

ProgressBar::ProgressBar(std::string label, int64_t total, std::FILE* out)
    : label_(std::move(label)),
      total_(std::max<int64_t>(total, 1)),
      // Of several ranks only rank 0 shows progress.
      out_(world_communicator() && world_communicator()->rank() != 0 ? nullptr : out),
      tty_(out_ && isatty(fileno(out_))) {}

void ProgressBar::update(int64_t done, const std::string& status) {
  update_partial(static_cast<double>(done), status);
}

void ProgressBar::update_partial(double done, const std::string& status) {
  const auto now = std::chrono::steady_clock::now();
  const auto total = static_cast<double>(total_);
  if (tty_) {
    if (now - last_draw_ < std::chrono::milliseconds(100) && done < total) return;
  } else {
    if (done >= total) return;  // finish() prints the final line
    const int decile = static_cast<int>(10 * done / total);
    if (decile == last_decile_) return;
    last_decile_ = decile;
  }
  last_draw_ = now;
  draw(done, status, false);
}

void ProgressBar::set_total(int64_t total) { total_ = std::max<int64_t>(total, 1); }

void ProgressBar::finish(const std::string& status) {
  draw(static_cast<double>(total_), status, true);
}

void ProgressBar::draw(double done, const std::string& status, bool final) {
  if (!out_) return;
  constexpr int kWidth = 30;
  const double fraction = std::clamp(done / static_cast<double>(total_), 0.0, 1.0);
  const int filled = static_cast<int>(fraction * kWidth);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : NAN;
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  std::fprintf(out_, "%s%s [%s] %3.0f%%  %s  %s %s%s", tty_ ? "\r\033[K" : "", label_.c_str(),
               bar.c_str(), 100 * fraction, status.c_str(), final ? "took" : "ETA",
               format_duration(final ? elapsed : eta).c_str(), tty_ && !final ? "" : "\n");
  std::fflush(out_);
}

}  // namespace tunescope::cli
