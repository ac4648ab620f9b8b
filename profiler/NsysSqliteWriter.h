// Exports a Trace as an SQLite database in the layout of Nsight Systems' own
// `nsys export --type sqlite`, so the SQL people already run on nsys exports (kernel
// summaries, NVTX joins) runs on tunescope traces. NsysSqliteReader reads it back.
//
// kernel -> CUPTI_ACTIVITY_KIND_KERNEL (shortName = demangledName = our name, grid and
// block 0: the trace does not record them), memcpy -> CUPTI_ACTIVITY_KIND_MEMCPY,
// memset -> CUPTI_ACTIVITY_KIND_MEMSET, sync -> CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
// overhead -> CUPTI_ACTIVITY_KIND_RUNTIME, ranges -> NVTX_EVENTS push/pop ranges.
// Times are ns from the trace's first record (nsys: from session start); the origin
// on our clock is kept in TUNESCOPE_METADATA. META_DATA_EXPORT, TARGET_INFO_GPU (one
// row per device) and TARGET_INFO_SESSION_START_TIME (wall time of the export, as the
// trace records no wall time) complete the layout.
#pragma once

#include "profiler/TraceWriter.h"

namespace tunescope::profiler {

class NsysSqliteWriter final : public TraceWriter {
 public:
  void write(const Trace& trace, const std::filesystem::path& path) const override;
};

}  // namespace tunescope::profiler
