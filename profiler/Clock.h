// The one clock of every trace: monotonic host time in nanoseconds.
#pragma once

#include <chrono>
#include <cstdint>

namespace tunescope::profiler {

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace tunescope::profiler
