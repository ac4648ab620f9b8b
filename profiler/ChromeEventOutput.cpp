#include "profiler/ChromeEventOutput.h"

#include <algorithm>

#include "profiler/ChromeTraceWriter.h"

namespace tunescope::profiler::chrome_trace {

void write_other_data(trace_output::TextOutput& out, std::string_view schema, const TraceMetadata& metadata,
                      std::optional<int64_t> time_origin_ns) {
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

trace_output::TextOutput& EventList::begin() {
  out_.raw(first_ ? "\n" : ",\n");
  first_ = false;
  return out_;
}

trace_output::TextOutput& EventList::complete(std::string_view name, std::string_view category, int64_t pid,
                                              int64_t tid, int64_t start_ns, int64_t end_ns) {
  begin().raw("{\"ph\":\"X\",\"cat\":").string(category).raw(",\"name\":").string(name);
  out_.raw(",\"pid\":").integer(pid).raw(",\"tid\":").integer(tid);
  out_.raw(",\"ts\":").microseconds(start_ns - origin_ns_);
  return out_.raw(",\"dur\":").microseconds(std::max<int64_t>(end_ns - start_ns, 0));
}

}  // namespace tunescope::profiler::chrome_trace
