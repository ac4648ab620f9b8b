// Nsight-Systems-layout SQLite writer: creates the nsys tables, interns names in
// StringIds, inserts one row per record in one transaction, then renames into place.
#include "profiler/NsysSqliteWriter.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <set>
#include <unordered_map>

#include "profiler/ChromeTraceWriter.h"
#include "profiler/NsysSqlite.h"
#include "profiler/SqliteDatabase.h"
#include "profiler/TraceFileOutput.h"

namespace tunescope::profiler {

namespace fs = std::filesystem;

int nsys::copy_kind_of(const std::string& name) {
  // CUpti_ActivityMemcpyKind values.
  static const std::pair<const char*, int> kinds[] = {
      {"HtoD", 1}, {"DtoH", 2}, {"HtoA", 3}, {"AtoH", 4}, {"AtoA", 5},
      {"AtoD", 6}, {"DtoA", 7}, {"DtoD", 8}, {"HtoH", 9}, {"PtoP", 10}};
  for (const auto& [label, kind] : kinds)
    if (name.find(label) != std::string::npos) return kind;
  return 0;
}

std::string nsys::copy_kind_name(int64_t copy_kind) {
  static const char* names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return copy_kind >= 0 && copy_kind <= 10 ? names[copy_kind] : "Unknown";
}

namespace {

// Column lists follow the nsys exporter's; columns the trace cannot fill are NULL, or
// 0 where nsys declares them NOT NULL.
constexpr const char* kSchemaSql = R"SQL(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
  shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
  registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
  gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
  localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER,
  graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
  deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER,
  srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,
  graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
  graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL,
  end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
  nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,
  int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
  floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,
  busLocation TEXT, totalMemory INTEGER, smCount INTEGER, chipName TEXT, uuid TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT,
  localTime TEXT);
CREATE TABLE TUNESCOPE_METADATA (name TEXT NOT NULL PRIMARY KEY, value TEXT);
CREATE TABLE TUNESCOPE_RECORDS (sourceTable TEXT NOT NULL, sourceRowId INTEGER NOT NULL,
  name TEXT, device INTEGER, lane INTEGER, category TEXT, flops REAL, bytes REAL,
  rangeId INTEGER, rank INTEGER, PRIMARY KEY (sourceTable, sourceRowId));
CREATE TABLE TUNESCOPE_FLOWS (kind TEXT NOT NULL, fromDevice INTEGER NOT NULL,
  fromStream INTEGER NOT NULL, fromNs INTEGER NOT NULL, toDevice INTEGER NOT NULL,
  toStream INTEGER NOT NULL, toNs INTEGER NOT NULL, fromRank INTEGER, toRank INTEGER);
)SQL";

// Our device ids become deviceId; a host (negative) device is kept in TUNESCOPE_RECORDS.
int64_t device_id(int device) { return device >= 0 ? device : 0; }
// One CUDA context per device, numbered from 1 as CUDA does.
int64_t context_id(int device) { return device_id(device) + 1; }

class SqliteExport {
 public:
  SqliteExport(SqliteDatabase& db, const Trace& trace)
      : db_(db),
        trace_(trace),
        origin_(trace_output::time_origin(trace)),
        ranked_(has_ranks(trace)),
        strings_(db.prepare("INSERT INTO StringIds (id, value) VALUES (?, ?)")),
        records_(
            db.prepare("INSERT INTO TUNESCOPE_RECORDS VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {}

  // The tables must exist (create_schema) before construction prepares the inserts.
  static void create_schema(SqliteDatabase& db) { db.exec(kSchemaSql); }

  void write() {
    db_.exec("BEGIN");
    write_activities();
    write_ranges();
    write_flows();
    write_metadata();
    db_.exec("COMMIT");
  }

 private:
  int64_t string_id(const std::string& value) {
    const auto [it, added] = string_ids_.emplace(value, static_cast<int64_t>(string_ids_.size()));
    if (added) strings_.bind(1, it->second).bind(2, std::string_view(value)).run();
    return it->second;
  }

  // The process a rank's records belong to: ours for a single-process trace.
  int64_t process_of(int rank) const {
    return ranked_ ? nsys::kRankPidBase + rank : static_cast<int64_t>(::getpid());
  }

  void write_flows() {
    SqliteStatement insert = db_.prepare(std::string("INSERT INTO ") + nsys::kFlowsTable +
                                         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const Flow& f : trace_.flows) {
      const std::string kind = to_string(f.kind);
      insert.bind(1, std::string_view(kind))
          .bind(2, int64_t{f.from.device})
          .bind(3, int64_t{f.from.stream});
      insert.bind(4, f.from.ns - origin_)
          .bind(5, int64_t{f.to.device})
          .bind(6, int64_t{f.to.stream});
      insert.bind(7, f.to.ns - origin_)
          .bind(8, int64_t{f.from.rank})
          .bind(9, int64_t{f.to.rank})
          .run();
    }
  }

  void side_record(const char* table, int64_t row, const std::string& name, int device, int lane,
                   const std::string& category, double flops, double bytes, uint64_t range_id,
                   int rank) {
    records_.bind(1, std::string_view(table)).bind(2, row).bind(3, std::string_view(name));
    records_.bind(4, int64_t{device}).bind(5, int64_t{lane}).bind(6, std::string_view(category));
    records_.bind(7, flops).bind(8, bytes).bind(9, static_cast<int64_t>(range_id));
    records_.bind(10, int64_t{rank}).run();
  }

  void write_activities() {
    SqliteStatement kernel = db_.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
        "correlationId, globalPid, demangledName, shortName, mangledName, registersPerThread, "
        "gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
        "localMemoryPerThread, localMemoryTotal, gridId) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)");
    SqliteStatement memcpy = db_.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
        "correlationId, globalPid, bytes, copyKind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    SqliteStatement memset = db_.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, "
        "correlationId, globalPid, value, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)");
    SqliteStatement sync = db_.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, "
        "streamId, correlationId, globalPid, syncType, eventId) VALUES (?, ?, ?, ?, ?, ?, ?, 0, "
        "0)");
    SqliteStatement runtime = db_.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
        "correlationId, nameId, returnValue) VALUES (?, ?, 0, ?, ?, ?, 0)");
    std::unordered_map<std::string, int64_t> rows;  // next rowid per table
    for (const Activity& a : trace_.activities) {
      const auto correlation = static_cast<int64_t>(a.correlation);
      const auto device_columns = [&](SqliteStatement& s) -> SqliteStatement& {
        return s.bind(1, a.start_ns - origin_)
            .bind(2, a.end_ns - origin_)
            .bind(3, device_id(a.device))
            .bind(4, context_id(a.device))
            .bind(5, int64_t{a.stream})
            .bind(6, correlation)
            .bind(7, nsys::global_pid(process_of(a.rank)));
      };
      const char* table = nullptr;
      switch (a.kind) {
        case ActivityKind::kernel: {
          const int64_t name = string_id(a.name);
          device_columns(kernel).bind(8, name).bind(9, name).run();
          table = nsys::kKernel;
          break;
        }
        case ActivityKind::memcpy:
          device_columns(memcpy)
              .bind(8, static_cast<int64_t>(a.bytes))
              .bind(9, int64_t{nsys::copy_kind_of(a.name)})
              .run();
          table = nsys::kMemcpy;
          break;
        case ActivityKind::memset:
          device_columns(memset).bind(8, static_cast<int64_t>(a.bytes)).run();
          table = nsys::kMemset;
          break;
        case ActivityKind::sync:
          device_columns(sync).run();
          table = nsys::kSync;
          break;
        case ActivityKind::overhead:
          // A runtime call belongs to a host thread: the lane is its tid.
          runtime.bind(1, a.start_ns - origin_)
              .bind(2, a.end_ns - origin_)
              .bind(3, nsys::global_tid(process_of(a.rank), a.stream))
              .bind(4, correlation)
              .bind(5, string_id(a.name))
              .run();
          table = nsys::kRuntime;
          break;
      }
      // SQLite numbers rowids from 1 in insertion order in a fresh table.
      side_record(table, ++rows[table], a.name, a.device, a.stream, "", a.flops, a.bytes,
                  a.range_id, a.rank);
    }
  }

  void write_ranges() {
    SqliteStatement nvtx = db_.prepare(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, category, text, globalTid, endGlobalTid, "
        "domainId) VALUES (?, ?, ?, ?, ?, ?, ?, 0)");
    int64_t row = 0;
    for (const Range& r : trace_.ranges) {
      const int64_t tid = nsys::global_tid(process_of(r.rank), r.lane);
      // NVTX categories are user numbers; ours are 1 + the RangeCategory value.
      nvtx.bind(1, r.start_ns - origin_)
          .bind(2, r.end_ns - origin_)
          .bind(3, int64_t{nsys::kNvtxPushPopRange})
          .bind(4, int64_t{1 + static_cast<int>(r.category)})
          .bind(5, std::string_view(r.name))
          .bind(6, tid)
          .bind(7, tid)
          .run();
      side_record(nsys::kNvtx, ++row, r.name, r.device, r.lane, to_string(r.category), 0, 0, r.id,
                  r.rank);
    }
  }

  void write_metadata() {
    SqliteStatement meta = db_.prepare("INSERT INTO TUNESCOPE_METADATA VALUES (?, ?)");
    const auto put = [&](const std::string& name, const std::string& value) {
      meta.bind(1, std::string_view(name)).bind(2, std::string_view(value)).run();
    };
    const TraceMetadata& m = trace_.metadata;
    put(chrome_trace::kSchemaKey, nsys::kSchema);
    put(chrome_trace::kMachineKey, m.machine);
    put(chrome_trace::kBackendKey, m.backend);
    put(chrome_trace::kConfigKey, m.config);
    put(chrome_trace::kTimeOriginKey, std::to_string(origin_));
    for (const auto& [key, value] : m.extra)
      put(std::string(chrome_trace::kExtraKey) + "." + key, value);

    SqliteStatement export_meta = db_.prepare("INSERT INTO META_DATA_EXPORT VALUES (?, ?)");
    export_meta.bind(1, std::string_view("EXPORT_PRODUCER"))
        .bind(2, std::string_view("tunescope"))
        .run();
    export_meta.bind(1, std::string_view("TUNESCOPE_SCHEMA"))
        .bind(2, std::string_view(nsys::kSchema))
        .run();

    std::set<int> devices;
    for (const Activity& a : trace_.activities)
      if (a.device >= 0) devices.insert(a.device);
    SqliteStatement gpu =
        db_.prepare("INSERT INTO TARGET_INFO_GPU (vmId, id, name) VALUES (0, ?, ?)");
    for (int device : devices)
      gpu.bind(1, int64_t{device})
          .bind(2, std::string_view(trace_output::device_name(m.backend, device)))
          .run();

    const auto now = std::chrono::system_clock::now();
    const int64_t now_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    char utc[32] = "", local[32] = "";
    std::tm parts{};
    if (gmtime_r(&seconds, &parts)) std::strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%SZ", &parts);
    if (localtime_r(&seconds, &parts))
      std::strftime(local, sizeof local, "%Y-%m-%dT%H:%M:%S", &parts);
    db_.prepare("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, ?, ?)")
        .bind(1, now_ns)
        .bind(2, std::string_view(utc))
        .bind(3, std::string_view(local))
        .run();
  }

  SqliteDatabase& db_;
  const Trace& trace_;
  const int64_t origin_;
  const bool ranked_;
  SqliteStatement strings_;
  SqliteStatement records_;
  std::unordered_map<std::string, int64_t> string_ids_;
};

}  // namespace

void NsysSqliteWriter::write(const Trace& trace, const fs::path& path) const {
  trace_output::write_atomically(path, [&](const fs::path& temp) {
    SqliteDatabase db(temp, SqliteDatabase::Mode::create);
    SqliteExport::create_schema(db);
    SqliteExport(db, trace).write();
  });
}

}  // namespace tunescope::profiler
