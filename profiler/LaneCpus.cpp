#include "profiler/LaneCpus.h"

#include <charconv>

namespace tunescope::profiler {

std::string lane_cpus_to_text(const std::vector<std::vector<int>>& lane_cpus) {
  std::string text;
  for (size_t lane = 0; lane < lane_cpus.size(); ++lane) {
    if (lane) text += ';';
    for (size_t i = 0; i < lane_cpus[lane].size(); ++i) {
      if (i) text += ',';
      text += std::to_string(lane_cpus[lane][i]);
    }
  }
  return text;
}

std::map<int, std::vector<int>> lane_cpus_from_text(const std::string& text) {
  std::map<int, std::vector<int>> lanes;
  int lane = 0;
  std::vector<int> cpus;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    int cpu = 0;
    const auto [next, error] = std::from_chars(p, end, cpu);
    if (error != std::errc() || cpu < 0) return {};
    cpus.push_back(cpu);
    p = next;
    if (p == end) break;
    if (*p == ';') {
      lanes[lane++] = std::move(cpus);
      cpus.clear();
    } else if (*p != ',') {
      return {};
    }
    ++p;
    if (p == end) return {};  // a trailing separator
  }
  if (!cpus.empty()) lanes[lane] = std::move(cpus);
  return lanes;
}

}  // namespace tunescope::profiler
