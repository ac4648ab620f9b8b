#include "profiler/CudaEventFlows.h"

#include <algorithm>
#include <map>
#include <utility>

namespace tunescope::profiler {

std::vector<Flow> cuda_event_flows(const std::vector<Activity>& activities,
                                   const std::vector<CudaEventUse>& records,
                                   const std::vector<CudaEventUse>& waits) {
  // Per device stream: its device work by correlation id (call order).
  std::map<std::pair<int, int>, std::vector<const Activity*>> lanes;
  for (const Activity& a : activities)
    if (a.device >= 0 && a.correlation != 0 &&
        (a.kind == ActivityKind::kernel || a.kind == ActivityKind::memcpy ||
         a.kind == ActivityKind::memset))
      lanes[{a.device, a.stream}].push_back(&a);
  for (auto& [key, work] : lanes)
    std::sort(work.begin(), work.end(),
              [](const Activity* x, const Activity* y) { return x->correlation < y->correlation; });
  const auto by_correlation = [](const Activity* a, uint64_t c) { return a->correlation < c; };

  std::vector<Flow> out;
  for (const CudaEventUse& wait : waits) {
    const CudaEventUse* record = nullptr;
    for (const CudaEventUse& r : records)
      if (r.event == wait.event && r.correlation < wait.correlation &&
          (!record || r.correlation > record->correlation))
        record = &r;
    if (!record) continue;
    const auto source = lanes.find({record->device, record->stream});
    const auto target = lanes.find({wait.device, wait.stream});
    if (source == lanes.end() || target == lanes.end()) continue;
    const auto& before = source->second;
    const auto captured =
        std::lower_bound(before.begin(), before.end(), record->correlation, by_correlation);
    if (captured == before.begin()) continue;  // nothing launched there before the record
    const auto& after = target->second;
    const auto next =
        std::lower_bound(after.begin(), after.end(), wait.correlation + 1, by_correlation);
    if (next == after.end()) continue;
    const Activity& last = **std::prev(captured);
    out.push_back(Flow{FlowKind::event,
                       {record->device, record->stream, last.end_ns},
                       {wait.device, wait.stream, (*next)->start_ns}});
  }
  return out;
}

}  // namespace tunescope::profiler
