#include "core/base/HostCpu.h"

#include <fstream>

namespace tunescope {

std::string host_cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto first = line.find_first_not_of(" \t", colon + 1);
    if (first == std::string::npos) continue;
    return line.substr(first, line.find_last_not_of(" \t\r\n") - first + 1);
  }
  return "unknown CPU";
}

}  // namespace tunescope
