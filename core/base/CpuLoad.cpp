#include "core/base/CpuLoad.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

#include "core/base/Error.h"

namespace tunescope {

namespace {

// The fields of a "cpuN" line: user nice system idle iowait irq softirq steal (guest time
// is already inside user and nice).
constexpr size_t kFields = 8;
constexpr size_t kIdle = 3, kIowait = 4;

}  // namespace

CpuTimes parse_proc_stat(std::string_view text, const std::vector<int>& cpus,
                         double ticks_per_second) {
  std::vector<bool> seen(cpus.size(), false);
  CpuTimes times;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    if (line.size() < 4 || line.substr(0, 3) != "cpu" || line[3] < '0' || line[3] > '9') continue;
    int cpu = -1;
    const auto [rest, error] = std::from_chars(line.data() + 3, line.data() + line.size(), cpu);
    if (error != std::errc()) continue;
    const auto it = std::find(cpus.begin(), cpus.end(), cpu);
    if (it == cpus.end()) continue;
    std::istringstream fields{std::string(rest, line.data() + line.size())};
    double ticks[kFields];
    for (double& t : ticks)
      if (!(fields >> t) || t < 0)
        fail(ErrorKind::runtime, "/proc/stat: the line of cpu", cpu, " is malformed: '", line, "'");
    double total = 0;
    for (double t : ticks) total += t;
    times.total_seconds += total / ticks_per_second;
    times.busy_seconds += (total - ticks[kIdle] - ticks[kIowait]) / ticks_per_second;
    seen[static_cast<size_t>(it - cpus.begin())] = true;
  }
  for (size_t i = 0; i < cpus.size(); ++i)
    if (!seen[i]) fail(ErrorKind::runtime, "/proc/stat: no line for cpu", cpus[i]);
  return times;
}

CpuTimes cpu_times(const std::vector<int>& cpus) {
  std::ifstream in("/proc/stat");
  if (!in) fail(ErrorKind::runtime, "/proc/stat: cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  const long ticks = sysconf(_SC_CLK_TCK);
  return parse_proc_stat(text.str(), cpus, ticks > 0 ? static_cast<double>(ticks) : 100.0);
}

double process_cpu_seconds() {
  timespec t{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0) return 0;
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace tunescope
