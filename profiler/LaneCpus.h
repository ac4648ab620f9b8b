// The trace metadata of a run whose executor bound its threads to CPUs (the engine's
// cpu_binding knob): per lane, the CPUs its threads ran on. The analysis reads it to know
// that two lanes with CPUs of their own never waited for each other's core.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tunescope::profiler {

// "0;1": lane by lane (lane i is stream i of its device), ';' between lanes, ',' between
// a lane's threads (its lane thread first). Absent: the threads were not bound.
inline constexpr const char* kLaneCpusKey = "lane_cpus";

std::string lane_cpus_to_text(const std::vector<std::vector<int>>& lane_cpus);
// Lane (stream) -> its CPUs; empty for text that is not in the form above.
std::map<int, std::vector<int>> lane_cpus_from_text(const std::string& text);

}  // namespace tunescope::profiler
