// The Nsight Systems SQLite layout shared by NsysSqliteWriter and NsysSqliteReader:
// table and column names of `nsys export --type sqlite` (NVIDIA, "SQLite Export Schema
// Reference" of the Nsight Systems exporter docs), the NVTX event types, the
// serialised process/thread ids, and tunescope's own side tables.
#pragma once

#include <cstdint>
#include <string>

namespace tunescope::profiler::nsys {

inline constexpr const char* kStringIds = "StringIds";
inline constexpr const char* kKernel = "CUPTI_ACTIVITY_KIND_KERNEL";
inline constexpr const char* kMemcpy = "CUPTI_ACTIVITY_KIND_MEMCPY";
inline constexpr const char* kMemset = "CUPTI_ACTIVITY_KIND_MEMSET";
inline constexpr const char* kSync = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
inline constexpr const char* kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
inline constexpr const char* kNvtx = "NVTX_EVENTS";

// NVTX_EVENTS.eventType (ENUM_NSYS_EVENT_TYPE): push/pop and start/end ranges.
inline constexpr int kNvtxPushPopRange = 59;
inline constexpr int kNvtxStartEndRange = 60;

// CUpti_ActivityMemcpyKind, stored in CUPTI_ACTIVITY_KIND_MEMCPY.copyKind.
int copy_kind_of(const std::string& memcpy_name);
std::string copy_kind_name(int64_t copy_kind);

// nsys serialises ids as (vm id << 56) | (pid << 24) | tid; the exporter docs extract
// them with globalTid / 0x1000000 % 0x1000000 (pid) and globalTid % 0x1000000 (tid).
inline int64_t global_pid(int64_t pid) { return (pid % 0x1000000) * 0x1000000; }
inline int64_t global_tid(int64_t pid, int64_t tid) { return global_pid(pid) + tid % 0x1000000; }
inline int64_t tid_of(int64_t global_tid) { return global_tid % 0x1000000; }

// tunescope's additions, ignored by tools that query nsys tables by name:
// TUNESCOPE_METADATA(name, value): schema, machine, backend, config, time origin, extra.*
// TUNESCOPE_RECORDS(sourceTable, sourceRowId, name, device, lane, category, flops, bytes):
// what a row of an nsys table cannot hold (our names of memcpy/memset/sync records,
// host devices, lanes of ranges, range categories, flops), so a round trip is exact.
inline constexpr const char* kMetadataTable = "TUNESCOPE_METADATA";
inline constexpr const char* kRecordsTable = "TUNESCOPE_RECORDS";
inline constexpr const char* kSchema = "tunescope.nsys-sqlite/1";

}  // namespace tunescope::profiler::nsys
