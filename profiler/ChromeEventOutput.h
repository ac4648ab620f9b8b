// The trace-event JSON skeleton ChromeTraceWriter and KinetoTraceWriter share:
// tunescope's metadata object (otherData) and the event list, whose complete events
// are timed in microseconds relative to the trace's origin.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "profiler/Trace.h"
#include "profiler/TraceFileOutput.h"

namespace tunescope::profiler::chrome_trace {

// The category of dependency flows in our traces (Kineto's launch flows are "ac2g").
inline constexpr const char* kDependencyCategory = "dependency";

// {"schema":…,"machine":…,"backend":…,"config":…[,"time_origin_ns":…],"extra":{…}}
void write_other_data(trace_output::TextOutput& out, std::string_view schema,
                      const TraceMetadata& metadata, std::optional<int64_t> time_origin_ns);

// (launch, kernel) index pairs: a host-side overhead activity (the CUDA API call) and a
// kernel of the same rank sharing a nonzero correlation id, as CUPTI reports a launch
// and what it launched.
std::vector<std::pair<size_t, size_t>> launch_kernel_pairs(const std::vector<Activity>& activities);

// The elements of "traceEvents": each begin() places the separator.
class EventList {
 public:
  // `ranked`: the trace has several ranks, so each flow end's args carry its rank.
  EventList(trace_output::TextOutput& out, int64_t origin_ns, bool ranked = false)
      : out_(out), origin_ns_(origin_ns), ranked_(ranked) {}

  trace_output::TextOutput& begin();
  // {"ph":"X","cat":…,"name":…,"pid":…,"tid":…,"ts":…,"dur":… left open for the caller's
  // args and closing brace.
  trace_output::TextOutput& complete(std::string_view name, std::string_view category, int64_t pid,
                                     int64_t tid, int64_t start_ns, int64_t end_ns);
  // A flow ("s" start bound to the enclosing slice, or "f" end bound to the slice it
  // lands on, "bp":"e") with Kineto's launch -> kernel category "ac2g".
  void flow(char phase, uint64_t id, int64_t pid, int64_t tid, int64_t ts_ns);
  // The trace's dependency flows (Trace::flows): cat kDependencyCategory, name the flow
  // kind, ids from 1, and args {device, stream[, rank]} with each end's exact lane. Each
  // end is drawn on its lane's first track, as `place(end)` gives (pid, tid).
  template <typename Place>
  void dependency_flows(const std::vector<Flow>& flows, Place place) {
    uint64_t id = 0;
    for (const Flow& flow : flows) {
      ++id;
      dependency_end('s', id, flow.kind, flow.from, place(flow.from));
      dependency_end('f', id, flow.kind, flow.to, place(flow.to));
    }
  }
  // A launch flow's id: the correlation, made unique across ranks in a ranked trace.
  uint64_t launch_flow_id(const Activity& kernel) const {
    return ranked_ ? (static_cast<uint64_t>(kernel.rank) << 48) | kernel.correlation
                   : kernel.correlation;
  }
  bool ranked() const { return ranked_; }
  int64_t origin_ns() const { return origin_ns_; }

 private:
  void dependency_end(char phase, uint64_t id, FlowKind kind, const FlowEnd& end,
                      std::pair<int64_t, int64_t> place);

  trace_output::TextOutput& out_;
  const int64_t origin_ns_;
  const bool ranked_;
  bool first_ = true;
};

}  // namespace tunescope::profiler::chrome_trace
