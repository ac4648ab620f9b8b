#include "profiler/ChromeEventOutput.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "profiler/ChromeTraceWriter.h"

namespace tunescope::profiler::chrome_trace {

void write_other_data(trace_output::TextOutput& out, std::string_view schema,
                      const TraceMetadata& metadata, std::optional<int64_t> time_origin_ns) {
  out.raw("{").string(kSchemaKey).raw(":").string(schema);
  out.raw(",").string(kMachineKey).raw(":").string(metadata.machine);
  out.raw(",").string(kBackendKey).raw(":").string(metadata.backend);
  out.raw(",").string(kConfigKey).raw(":").string(metadata.config);
  if (time_origin_ns) out.raw(",").string(kTimeOriginKey).raw(":").integer(*time_origin_ns);
  out.raw(",").string(kExtraKey).raw(":{");
  bool first = true;
  for (const auto& [key, value] : metadata.extra) {
    out.raw(first ? "" : ",").string(key).raw(":").string(value);
    first = false;
  }
  out.raw("}}");
}

std::vector<std::pair<size_t, size_t>> launch_kernel_pairs(
    const std::vector<Activity>& activities) {
  // Correlation ids are per process: the key holds the rank in its top bits.
  const auto key = [](const Activity& a) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a.rank)) << 48) ^ a.correlation;
  };
  std::unordered_map<uint64_t, size_t> launch_of;
  for (size_t i = 0; i < activities.size(); ++i) {
    const Activity& a = activities[i];
    if (a.kind == ActivityKind::overhead && a.correlation != 0) launch_of.emplace(key(a), i);
  }
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t i = 0; i < activities.size(); ++i) {
    const Activity& kernel = activities[i];
    if (kernel.kind != ActivityKind::kernel || kernel.correlation == 0) continue;
    const auto launch = launch_of.find(key(kernel));
    if (launch != launch_of.end() && activities[launch->second].rank == kernel.rank &&
        activities[launch->second].correlation == kernel.correlation)
      pairs.emplace_back(launch->second, i);
  }
  return pairs;
}

void EventList::flow(char phase, uint64_t id, int64_t pid, int64_t tid, int64_t ts_ns) {
  begin()
      .raw("{\"ph\":\"")
      .raw(std::string(1, phase))
      .raw("\",\"id\":")
      .integer(static_cast<int64_t>(id));
  out_.raw(",\"pid\":").integer(pid).raw(",\"tid\":").integer(tid);
  out_.raw(",\"ts\":").microseconds(ts_ns - origin_ns_);
  out_.raw(",\"cat\":\"ac2g\",\"name\":\"ac2g\"").raw(phase == 'f' ? ",\"bp\":\"e\"}" : "}");
}

void EventList::dependency_end(char phase, uint64_t id, FlowKind kind, const FlowEnd& end,
                               std::pair<int64_t, int64_t> place) {
  begin()
      .raw("{\"ph\":\"")
      .raw(std::string(1, phase))
      .raw("\",\"id\":")
      .integer(static_cast<int64_t>(id));
  out_.raw(",\"pid\":").integer(place.first).raw(",\"tid\":").integer(place.second);
  out_.raw(",\"ts\":").microseconds(end.ns - origin_ns_);
  out_.raw(",\"cat\":").string(kDependencyCategory).raw(",\"name\":").string(to_string(kind));
  if (phase == 'f') out_.raw(",\"bp\":\"e\"");
  out_.raw(",\"args\":{\"device\":").integer(end.device).raw(",\"stream\":").integer(end.stream);
  if (ranked_) out_.raw(",\"rank\":").integer(end.rank);
  out_.raw("}}");
}

trace_output::TextOutput& EventList::begin() {
  out_.raw(first_ ? "\n" : ",\n");
  first_ = false;
  return out_;
}

trace_output::TextOutput& EventList::complete(std::string_view name, std::string_view category,
                                              int64_t pid, int64_t tid, int64_t start_ns,
                                              int64_t end_ns) {
  begin().raw("{\"ph\":\"X\",\"cat\":").string(category).raw(",\"name\":").string(name);
  out_.raw(",\"pid\":").integer(pid).raw(",\"tid\":").integer(tid);
  out_.raw(",\"ts\":").microseconds(start_ns - origin_ns_);
  return out_.raw(",\"dur\":").microseconds(std::max<int64_t>(end_ns - start_ns, 0));
}

}  // namespace tunescope::profiler::chrome_trace
