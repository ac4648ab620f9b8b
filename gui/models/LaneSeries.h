// The records of one timeline row as parallel, start-sorted arrays: what the LOD
// builder binary-searches on every paint, so it is kept contiguous and index-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tunescope::gui {

struct LaneSeries {
  std::vector<int64_t> starts;  // sorted ascending
  std::vector<int64_t> ends;
  std::vector<uint32_t> indices;  // into Trace::activities or Trace::ranges
  int64_t maxDurationNs = 0;      // bounds the backward search for straddling records

  size_t size() const { return starts.size(); }
  void reserve(size_t count);
  void add(int64_t startNs, int64_t endNs, uint32_t index);
};

}  // namespace tunescope::gui
