// The Nsight Systems SQLite layout shared by NsysSqliteWriter and NsysSqliteReader:
// table and column names of `nsys export --type sqlite`, the NVTX event types, the
// serialised process/thread ids, and tunescope's own side tables.
//
// Checked (2026-12) against NVIDIA's "SQLite Schema Reference", Nsight Systems Analysis
// Guide, https://docs.nvidia.com/nsight-systems/AnalysisGuide/index.html#sqlite-schema-reference
// (schema 3.28.1, release 2026.4; earlier: https://docs.nvidia.com/nsight-systems/2021.5/
// nsys-exporter/exported_data.html), and the `.schema` of an nsys 2024.6.2 export
// (schema 3.16.1): every column we write or read (StringIds; CUPTI_ACTIVITY_KIND_KERNEL
// start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName and
// shortName as StringIds ids, grid/block dims; MEMCPY bytes, copyKind; MEMSET value,
// bytes; SYNCHRONIZATION syncType, eventId; RUNTIME eventClass, globalTid, correlationId,
// nameId, returnValue; NVTX_EVENTS start, end, eventType, rangeId, category, color, text,
// globalTid, endGlobalTid, textId, domainId; META_DATA_EXPORT; TARGET_INFO_GPU;
// TARGET_INFO_SESSION_START_TIME) exists there under the same name. Newer exports add
// columns (greenContextId, ...); readers look columns up by name, so those are ignored.
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

// NVTX_EVENTS.eventType (ENUM_NSYS_EVENT_TYPE: 59 NvtxPushPopRange, 60 NvtxStartEndRange).
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
inline int64_t pid_of(int64_t global_tid) { return global_tid / 0x1000000 % 0x1000000; }

// tunescope's additions, ignored by tools that query nsys tables by name:
// TUNESCOPE_METADATA(name, value): schema, machine, backend, config, time origin, extra.*
// TUNESCOPE_RECORDS(sourceTable, sourceRowId, name, device, lane, category, flops, bytes,
// rangeId, rank): what a row of an nsys table cannot hold (our names of memcpy/memset/sync
// records, host devices, lanes of ranges, range categories, flops, the range a record
// was launched in and each range's id, the record's rank), so a round trip is exact.
// TUNESCOPE_FLOWS(kind, fromDevice, fromStream, fromNs, toDevice, toStream, toNs,
// fromRank, toRank): the trace's dependency flows (Trace::flows), times like the other
// tables'. Files written before ranks lack the rank columns (read as rank 0).
// A merged trace's ranks are processes: rank r's records carry the globalPid (and the
// globalTid's pid) of process kRankPidBase + r; a foreign export's distinct processes
// become ranks 0, 1, ... in pid order.
inline constexpr const char* kMetadataTable = "TUNESCOPE_METADATA";
inline constexpr const char* kFlowsTable = "TUNESCOPE_FLOWS";
inline constexpr const char* kRecordsTable = "TUNESCOPE_RECORDS";
inline constexpr const char* kSchema = "tunescope.nsys-sqlite/1";
// The process id of rank 0 in a ranked trace (a single-process trace keeps the writer's).
inline constexpr int64_t kRankPidBase = 100'000;

}  // namespace tunescope::profiler::nsys
