// Chrome trace-event JSON export, loadable in Perfetto UI and chrome://tracing, plain
// or gzip (path ending in ".gz"). ChromeTraceReader reads it back.
//
// Layout: one process per device, one thread per stream/lane for activities and one
// per lane for ranges; every record is a complete ("X") event with cat = activity kind
// or range category; ts/dur in microseconds with three decimals, relative to the
// earliest record (the origin is kept in otherData, so nanoseconds survive doubles).
// pid and tid are offset by one because Perfetto treats pid 0 as the kernel's swapper
// and has merged tid 0 with tid 1; args always carry the true device, stream and lane.
// Records that would partially overlap on one tid (which viewers cannot nest) go to
// extra tids, kTrackStride apart. A launch (overhead) and the kernel sharing its nonzero
// correlation are linked by an "ac2g" flow, as in Kineto traces. Trace::flows become
// flow events of category "dependency" named by their kind, with each end's device and
// stream in args.
// A merged trace of several ranks (has_ranks) has one process per rank instead (pid =
// rank + 1, named "rank N"), each device of a rank a block of kDeviceTidStride tids
// (threads named "GPU 0 stream 7", "CPU lane 1 ranges"), and "rank" in every record's
// args.
#pragma once

#include <algorithm>
#include <cstdint>

#include "profiler/TraceWriter.h"

namespace tunescope::profiler {

namespace chrome_trace {
inline constexpr int kRangeTidBase = 1000;
inline constexpr int kTrackStride = 1'000'000;
inline constexpr int kHostPidBase = 1'000'000;  // for negative (host) device ids

inline int pid_of_device(int device) { return device >= 0 ? device + 1 : kHostPidBase - device; }
// `track` > 0 only for records that partially overlap others on the same lane.
inline int64_t activity_tid(int stream, int track = 0) {
  return int64_t{stream} + 1 + int64_t{kTrackStride} * track;
}
inline int64_t range_tid(int lane, int track = 0) {
  return int64_t{kRangeTidBase} + lane + int64_t{kTrackStride} * track;
}
// The rank layout: tids of device d start at (d + 2) * kDeviceTidStride (host -1 first);
// devices beyond 97 share the last block (their args still name them).
inline constexpr int kDeviceTidStride = 10'000;
inline int pid_of_rank(int rank) { return rank + 1; }
inline int64_t device_tid_base(int device) {
  return int64_t{kDeviceTidStride} * (std::clamp(device, -1, 97) + 2);
}
inline constexpr const char* kSchema = "tunescope.trace/1";
// otherData keys
inline constexpr const char* kSchemaKey = "schema";
inline constexpr const char* kMachineKey = "machine";
inline constexpr const char* kBackendKey = "backend";
inline constexpr const char* kConfigKey = "config";
inline constexpr const char* kExtraKey = "extra";
inline constexpr const char* kTimeOriginKey = "time_origin_ns";
}  // namespace chrome_trace

class ChromeTraceWriter final : public TraceWriter {
 public:
  void write(const Trace& trace, const std::filesystem::path& path) const override;
};

}  // namespace tunescope::profiler
