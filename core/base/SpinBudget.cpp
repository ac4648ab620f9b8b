#include "core/base/SpinBudget.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <charconv>

#include "profiler/Clock.h"

namespace tunescope {

namespace {

constexpr double kSampleWeight = 0.1;
constexpr double kCrowdedAbove = 0.5;
constexpr int64_t kSampleEveryNs = 10'000'000;

int online_cpus() {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return cpus > 0 ? static_cast<int>(cpus) : 1;
}

std::optional<int> read_running_threads() {
  const int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char text[128];
  const ssize_t got = read(fd, text, sizeof text);
  close(fd);
  if (got <= 0) return std::nullopt;
  return parse_running_threads(std::string_view(text, static_cast<size_t>(got)));
}

}  // namespace

std::optional<int> parse_running_threads(std::string_view loadavg) {
  // "0.52 0.58 0.59 2/467 12345": three averages, then running/total.
  size_t field_start = 0;
  for (int field = 0; field < 3; ++field) {
    const size_t space = loadavg.find(' ', field_start);
    if (space == std::string_view::npos) return std::nullopt;
    field_start = space + 1;
  }
  const size_t slash = loadavg.find('/', field_start);
  if (slash == std::string_view::npos) return std::nullopt;
  int running = 0;
  const char* first = loadavg.data() + field_start;
  const char* last = loadavg.data() + slash;
  const auto [end, error] = std::from_chars(first, last, running);
  if (error != std::errc() || end != last || running < 0) return std::nullopt;
  return running;
}

double next_crowding(double crowding, int running_threads, int cpus) {
  const double excess = running_threads > cpus ? running_threads - cpus : 0;
  return crowding + kSampleWeight * (excess - crowding);
}

int spin_pauses_for(double crowding) {
  return crowding > kCrowdedAbove ? kShortSpinPauses : kLongSpinPauses;
}

int spin_pauses_now() {
  static const int cpus = online_cpus();
  static std::atomic<int64_t> next_sample_ns{0};
  static std::atomic<double> crowding{0};
  static std::atomic<bool> readable{true};
  const int64_t now = profiler::now_ns();
  int64_t due = next_sample_ns.load(std::memory_order_relaxed);
  if (now >= due && next_sample_ns.compare_exchange_strong(due, now + kSampleEveryNs,
                                                           std::memory_order_relaxed)) {
    if (const std::optional<int> running = read_running_threads())
      crowding.store(next_crowding(crowding.load(std::memory_order_relaxed), *running, cpus),
                     std::memory_order_relaxed);
    else
      readable.store(false, std::memory_order_relaxed);
  }
  if (!readable.load(std::memory_order_relaxed)) return kShortSpinPauses;
  return spin_pauses_for(crowding.load(std::memory_order_relaxed));
}

}  // namespace tunescope
