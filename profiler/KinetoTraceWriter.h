// Chrome trace JSON in the layout the PyTorch profiler (Kineto, libkineto/src/
// output_json.cpp) writes, so tools built for PyTorch traces (Holistic Trace Analysis,
// TensorBoard's profiler plugin) read ours; Perfetto and chrome://tracing too. Plain,
// or gzip when the path ends in ".gz". ChromeTraceReader reads it back exactly.
//
// Layout (Kineto's names): top level schemaVersion, deviceProperties, distributedInfo,
// displayTimeUnit, baseTimeNanoseconds, traceEvents, and tunescope's metadata in
// otherData. Activities are complete ("X") events with pid = device, tid = stream,
// cat "kernel" | "gpu_memcpy" | "gpu_memset" | "cuda_sync" | "overhead", args
// {device, stream, correlation, flops, bytes}. Ranges are cat "user_annotation" on a
// host process (kineto::kHostPid) with tid = lane + 1, args {device, lane, category}.
// ts/dur are microseconds with three decimals relative to baseTimeNanoseconds, so
// nanoseconds survive doubles. An overhead (launch) activity and a kernel sharing a
// nonzero correlation are linked by an "ac2g" flow, as Kineto links launches to kernels;
// a host launch with a range_id is drawn on its range's thread, nested in the range.
// Trace::flows are "dependency" flows as in ChromeTraceWriter (tid = stream).
// Records that would partially overlap on one tid go to extra tids kTrackStride apart.
// A merged trace of several ranks (has_ranks) gives each rank its own block of pids
// (kRankPidStride apart: its devices and its host process, named "rank N · ..."), and
// distributedInfo the merged world size.
#pragma once

#include <cstdint>
#include <string>

#include "profiler/TraceWriter.h"

namespace tunescope::profiler {

namespace kineto {
inline constexpr int kSchemaVersion = 1;    // libkineto's kSchemaVersion
inline constexpr int kHostPid = 1'000'000;  // the process holding ranges (Kineto: the OS pid)
inline constexpr int kTrackStride = 1'000'000;
inline constexpr int kRankPidStride = 2'000'000;  // above kHostPid and its host devices
// Kineto category names (libkineto/src/ActivityType.cpp), by our activity kind.
std::string category_of(ActivityKind kind);
}  // namespace kineto

class KinetoTraceWriter final : public TraceWriter {
 public:
  void write(const Trace& trace, const std::filesystem::path& path) const override;
};

}  // namespace tunescope::profiler
