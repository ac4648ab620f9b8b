#include "profiler/TraceSlice.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace tunescope::profiler {

namespace {

// Start-ordered, disjoint [start, end) windows: the ranges of one name on one host thread
// follow one another (a candidate's turns), so they do not nest.
class Windows {
 public:
  void add(int64_t start, int64_t end) { spans_.emplace_back(start, end); }
  void sort() { std::sort(spans_.begin(), spans_.end()); }
  bool contain(int64_t start, int64_t end) const {
    auto after = std::upper_bound(spans_.begin(), spans_.end(),
                                  std::pair{start, std::numeric_limits<int64_t>::max()});
    if (after == spans_.begin()) return false;
    const auto& span = *std::prev(after);
    return span.first <= start && end <= span.second;
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> spans_;
};

}  // namespace

Trace within_ranges(const Trace& trace, std::string_view name, RangeCategory category) {
  Windows windows;
  for (const Range& r : trace.ranges)
    if (r.category == category && r.name == name) windows.add(r.start_ns, r.end_ns);
  windows.sort();
  Trace slice;
  slice.metadata = trace.metadata;
  for (const Activity& a : trace.activities)
    if (windows.contain(a.start_ns, a.end_ns)) slice.activities.push_back(a);
  for (const Range& r : trace.ranges)
    if (windows.contain(r.start_ns, r.end_ns)) slice.ranges.push_back(r);
  for (const Flow& f : trace.flows)
    if (windows.contain(f.from.ns, f.from.ns) && windows.contain(f.to.ns, f.to.ns))
      slice.flows.push_back(f);
  return slice;
}

}  // namespace tunescope::profiler
