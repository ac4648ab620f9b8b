// Nsight Systems SQLite reader: queries the nsys tables present in the file, adapting
// to the columns each nsys version exports, and applies tunescope's side tables when
// the file is one of ours.
#include "profiler/NsysSqliteReader.h"

#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "profiler/ChromeTraceWriter.h"
#include "profiler/FileKind.h"
#include "profiler/NsysSqlite.h"
#include "profiler/SqliteDatabase.h"

namespace tunescope::profiler {

namespace fs = std::filesystem;

namespace {

struct SideRecord {
  std::string name;
  int device = 0;
  int lane = 0;
  std::string category;
  double flops = 0;
  double bytes = 0;
  uint64_t range_id = 0;  // Activity::range_id, or a range's own Range::id
  int rank = 0;
};

class NsysImport {
 public:
  explicit NsysImport(SqliteDatabase& db) : db_(db) {}

  Trace read() {
    if (!is_nsys_export(db_))
      throw std::runtime_error(
          "not an Nsight Systems export: no StringIds with CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS "
          "tables");
    read_metadata();
    read_side_records();
    read_device_table(nsys::kKernel, ActivityKind::kernel);
    read_device_table(nsys::kMemcpy, ActivityKind::memcpy);
    read_device_table(nsys::kMemset, ActivityKind::memset);
    read_device_table(nsys::kSync, ActivityKind::sync);
    read_runtime();
    read_nvtx();
    read_flows();
    assign_foreign_ranks();
    for (Activity& a : trace_.activities) {
      a.start_ns += origin_;
      a.end_ns += origin_;
    }
    for (Range& r : trace_.ranges) {
      r.start_ns += origin_;
      r.end_ns += origin_;
    }
    for (Flow& f : trace_.flows) {
      f.from.ns += origin_;
      f.to.ns += origin_;
    }
    sort_by_start(trace_);
    return std::move(trace_);
  }

 private:
  void read_metadata() {
    if (!db_.has_table(nsys::kMetadataTable)) {
      // A real nsys export: CUDA, machine named by its GPUs.
      trace_.metadata.backend = "cuda";
      trace_.metadata.extra["source"] = "nsys-sqlite";
      if (db_.has_table("TARGET_INFO_GPU") && db_.columns("TARGET_INFO_GPU").count("name")) {
        SqliteStatement gpus =
            db_.prepare("SELECT name, count(*) FROM TARGET_INFO_GPU GROUP BY name ORDER BY name");
        while (gpus.step()) {
          const int64_t count = gpus.integer(1);
          trace_.metadata.machine += (trace_.metadata.machine.empty() ? "" : ", ") + gpus.text(0) +
                                     (count > 1 ? " x" + std::to_string(count) : "");
        }
      }
      return;
    }
    const std::string extra_prefix = std::string(chrome_trace::kExtraKey) + ".";
    SqliteStatement meta = db_.prepare("SELECT name, value FROM TUNESCOPE_METADATA");
    while (meta.step()) {
      const std::string name = meta.text(0), value = meta.text(1);
      if (name == chrome_trace::kMachineKey)
        trace_.metadata.machine = value;
      else if (name == chrome_trace::kBackendKey)
        trace_.metadata.backend = value;
      else if (name == chrome_trace::kConfigKey)
        trace_.metadata.config = value;
      else if (name == chrome_trace::kTimeOriginKey)
        origin_ = parse_origin(value);
      else if (name.rfind(extra_prefix, 0) == 0)
        trace_.metadata.extra[name.substr(extra_prefix.size())] = value;
    }
  }

  static int64_t parse_origin(const std::string& value) {
    size_t used = 0;
    try {
      const int64_t origin = std::stoll(value, &used);
      if (used == value.size()) return origin;
    } catch (const std::logic_error&) {
    }
    throw std::runtime_error("TUNESCOPE_METADATA: bad time origin '" + value + "'");
  }

  // Our flows; a foreign export has none (its edges are implied by correlation ids
  // and stream order).
  void read_flows() {
    if (!db_.has_table(nsys::kFlowsTable)) return;
    // Files written before ranks lack the rank columns.
    const std::set<std::string> columns = db_.columns(nsys::kFlowsTable);
    SqliteStatement rows =
        db_.prepare("SELECT kind, fromDevice, fromStream, fromNs, toDevice, toStream, toNs, " +
                    column_or(columns, "fromRank", "0") + ", " + column_or(columns, "toRank", "0") +
                    " FROM " + nsys::kFlowsTable);
    while (rows.step()) {
      Flow f;
      try {
        f.kind = parse_flow_kind(rows.text(0));
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error(std::string(nsys::kFlowsTable) + ": " + e.what());
      }
      f.from = {static_cast<int>(rows.integer(1)), static_cast<int>(rows.integer(2)),
                rows.integer(3), static_cast<int>(rows.integer(7))};
      f.to = {static_cast<int>(rows.integer(4)), static_cast<int>(rows.integer(5)), rows.integer(6),
              static_cast<int>(rows.integer(8))};
      trace_.flows.push_back(f);
    }
  }

  void read_side_records() {
    if (!db_.has_table(nsys::kRecordsTable)) return;
    // Exports written before range ids were kept lack the rangeId column.
    // and those written before ranks the rank column.
    const std::set<std::string> columns = db_.columns(nsys::kRecordsTable);
    SqliteStatement rows = db_.prepare(
        "SELECT sourceTable, sourceRowId, name, device, lane, category, flops, bytes, " +
        column_or(columns, "rangeId", "0") + ", COALESCE(" + column_or(columns, "rank", "0") +
        ", 0) FROM TUNESCOPE_RECORDS");
    while (rows.step())
      side_[rows.text(0)][rows.integer(1)] = SideRecord{rows.text(2),
                                                        static_cast<int>(rows.integer(3)),
                                                        static_cast<int>(rows.integer(4)),
                                                        rows.text(5),
                                                        rows.real(6),
                                                        rows.real(7),
                                                        static_cast<uint64_t>(rows.integer(8)),
                                                        static_cast<int>(rows.integer(9))};
  }

  const SideRecord* side(const char* table, int64_t row) const {
    const auto t = side_.find(table);
    if (t == side_.end()) return nullptr;
    const auto r = t->second.find(row);
    return r == t->second.end() ? nullptr : &r->second;
  }

  // `column` if the table has it, else the SQL fallback (older nsys versions lack some).
  static std::string column_or(const std::set<std::string>& columns, const std::string& column,
                               const std::string& fallback) {
    return columns.count(column) ? column : fallback;
  }

  void read_device_table(const char* table, ActivityKind kind) {
    if (!db_.has_table(table)) return;
    const std::set<std::string> columns = db_.columns(table);
    std::string name = "NULL";
    if (kind == ActivityKind::kernel) {
      const std::string id = columns.count("shortName")       ? "shortName"
                             : columns.count("demangledName") ? "demangledName"
                                                              : column_or(columns, "name", "NULL");
      name = "(SELECT value FROM StringIds WHERE id = t." + id + ")";
    } else if (kind == ActivityKind::memcpy) {
      name = column_or(columns, "copyKind", "0");
    }
    const std::string sql =
        "SELECT t.rowid, t.start, t.end, " + column_or(columns, "deviceId", "0") + ", " +
        column_or(columns, "streamId", "0") + ", " + column_or(columns, "correlationId", "0") +
        ", " + column_or(columns, "bytes", "0") + ", " + name + ", " +
        column_or(columns, "globalPid", "0") + " FROM " + table + " AS t";
    SqliteStatement rows = db_.prepare(sql);
    while (rows.step()) {
      Activity a;
      a.kind = kind;
      a.start_ns = rows.integer(1);
      a.end_ns = rows.integer(2);
      a.device = static_cast<int>(rows.integer(3));
      a.stream = static_cast<int>(rows.integer(4));
      a.correlation = static_cast<uint64_t>(rows.integer(5));
      a.bytes = static_cast<double>(rows.integer(6));
      switch (kind) {
        case ActivityKind::kernel: a.name = rows.text(7); break;
        case ActivityKind::memcpy:
          a.name = "Memcpy " + nsys::copy_kind_name(rows.integer(7));
          break;
        case ActivityKind::memset: a.name = "Memset"; break;
        default: a.name = "Synchronize"; break;
      }
      const bool ours = apply_side(table, rows.integer(0), a);
      activity_pids_.push_back(ours ? 0 : nsys::pid_of(rows.integer(8)));
      trace_.activities.push_back(std::move(a));
    }
  }

  // Whether the row is one of ours (its side record sets what nsys cannot hold).
  bool apply_side(const char* table, int64_t row, Activity& a) const {
    const SideRecord* s = side(table, row);
    if (!s) return false;
    a.name = s->name;
    a.device = s->device;
    a.stream = s->lane;
    a.flops = s->flops;
    a.bytes = s->bytes;
    a.range_id = s->range_id;
    a.rank = s->rank;
    return true;
  }

  // A foreign export of several processes (an nsys capture of an MPI job): its distinct
  // processes become ranks 0, 1, ... in pid order. Our rows have their rank already
  // (pid 0 here), as do rows whose process is unknown.
  void assign_foreign_ranks() {
    std::set<int64_t> pids(activity_pids_.begin(), activity_pids_.end());
    pids.insert(range_pids_.begin(), range_pids_.end());
    pids.erase(0);
    if (pids.size() < 2) return;
    std::map<int64_t, int> rank_of;
    for (int64_t pid : pids) rank_of.emplace(pid, static_cast<int>(rank_of.size()));
    for (size_t i = 0; i < activity_pids_.size(); ++i)
      if (activity_pids_[i] != 0) trace_.activities[i].rank = rank_of[activity_pids_[i]];
    for (size_t i = 0; i < range_pids_.size(); ++i)
      if (range_pids_[i] != 0) trace_.ranges[i].rank = rank_of[range_pids_[i]];
  }

  // nsys tids are OS thread ids: lanes are numbered by each thread's first record.
  int lane_of_thread(int64_t global_tid) {
    return threads_.emplace(nsys::tid_of(global_tid), static_cast<int>(threads_.size()))
        .first->second;
  }

  void read_runtime() {
    if (!db_.has_table(nsys::kRuntime)) return;
    const std::set<std::string> columns = db_.columns(nsys::kRuntime);
    SqliteStatement rows = db_.prepare(
        "SELECT t.rowid, t.start, t.end, " + column_or(columns, "globalTid", "0") + ", " +
        column_or(columns, "correlationId", "0") + ", (SELECT value FROM StringIds WHERE id = t." +
        column_or(columns, "nameId", "NULL") + ") FROM CUPTI_ACTIVITY_KIND_RUNTIME AS t");
    while (rows.step()) {
      Activity a;
      a.kind = ActivityKind::overhead;
      a.start_ns = rows.integer(1);
      a.end_ns = rows.integer(2);
      a.device = -1;  // host
      a.stream = lane_of_thread(rows.integer(3));
      a.correlation = static_cast<uint64_t>(rows.integer(4));
      a.name = rows.text(5);
      const bool ours = apply_side(nsys::kRuntime, rows.integer(0), a);
      activity_pids_.push_back(ours ? 0 : nsys::pid_of(rows.integer(3)));
      trace_.activities.push_back(std::move(a));
    }
  }

  void read_nvtx() {
    if (!db_.has_table(nsys::kNvtx)) return;
    const std::set<std::string> columns = db_.columns(nsys::kNvtx);
    const std::string text_id =
        columns.count("textId") ? "(SELECT value FROM StringIds WHERE id = t.textId)" : "NULL";
    SqliteStatement rows =
        db_.prepare("SELECT t.rowid, t.start, t.end, " + column_or(columns, "globalTid", "0") +
                    ", COALESCE(t.text, " + text_id +
                    ", '') FROM NVTX_EVENTS AS t "
                    "WHERE t.end IS NOT NULL AND t.eventType IN (" +
                    std::to_string(nsys::kNvtxPushPopRange) + ", " +
                    std::to_string(nsys::kNvtxStartEndRange) + ")");
    while (rows.step()) {
      Range r;
      r.category = RangeCategory::phase;
      r.start_ns = rows.integer(1);
      r.end_ns = rows.integer(2);
      r.lane = lane_of_thread(rows.integer(3));
      r.name = rows.text(4);
      const SideRecord* s = side(nsys::kNvtx, rows.integer(0));
      if (s) {
        r.name = s->name;
        r.device = s->device;
        r.lane = s->lane;
        r.category = parse_range_category(s->category);
        r.id = s->range_id;
        r.rank = s->rank;
      }
      range_pids_.push_back(s ? 0 : nsys::pid_of(rows.integer(3)));
      trace_.ranges.push_back(std::move(r));
    }
  }

  SqliteDatabase& db_;
  Trace trace_;
  int64_t origin_ = 0;
  std::unordered_map<std::string, std::unordered_map<int64_t, SideRecord>> side_;
  std::map<int64_t, int> threads_;
  // The process of each record read, parallel to the trace's lists (0: ours or unknown).
  std::vector<int64_t> activity_pids_, range_pids_;
};

}  // namespace

bool is_nsys_export(const SqliteDatabase& db) {
  return db.has_table(nsys::kStringIds) &&
         (db.has_table(nsys::kKernel) || db.has_table(nsys::kMemcpy) ||
          db.has_table(nsys::kMemset) || db.has_table(nsys::kNvtx));
}

Trace read_nsys_sqlite(const fs::path& path) {
  const auto error = [&](const std::string& problem) {
    return std::runtime_error(path.string() + ": " + problem);
  };
  switch (sniff_file(path)) {
    case FileKind::missing: throw error("cannot open: No such file or directory");
    case FileKind::directory: throw error("cannot read trace: is a directory");
    case FileKind::nsys_sqlite:
    case FileKind::results_db:
    case FileKind::other_sqlite: break;  // what is not an nsys export is said below
    default: throw error("not an SQLite database");
  }
  try {
    SqliteDatabase db(path, SqliteDatabase::Mode::read_only);
    return NsysImport(db).read();
  } catch (const SqliteError&) {
    throw;  // names the file already
  } catch (const std::invalid_argument& e) {
    throw error(std::string("bad TUNESCOPE_RECORDS category: ") + e.what());
  } catch (const std::exception& e) {
    throw error(e.what());
  }
}

}  // namespace tunescope::profiler
