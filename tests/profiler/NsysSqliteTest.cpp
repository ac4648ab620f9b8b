// Tests of the Nsight-Systems-layout SQLite export and import: the SQL people run on
// nsys exports gives our metrics, round trips are exact, real-nsys-shaped databases
// read, and wrong files are rejected naming the file.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <map>

#include "TraceTestFiles.h"
#include "profiler/Metrics.h"
#include "profiler/NsysSqliteReader.h"
#include "profiler/NsysSqliteWriter.h"
#include "profiler/SqliteDatabase.h"
#include "profiler/analysis/DependencyGraph.h"

namespace tunescope::profiler {
namespace {

using test_files::ScratchDir;

Activity kernel(const char* name, int stream, int64_t start, int64_t end) {
  Activity a;
  a.name = name;
  a.stream = stream;
  a.start_ns = start;
  a.end_ns = end;
  return a;
}

// Several kernels of three names on two streams, a memcpy that the kernel SQL must
// not count, far from zero on the host clock.
Trace kernel_trace() {
  constexpr int64_t t0 = 5'000'000'000'123;
  Trace trace;
  trace.metadata.backend = "cpu";
  int64_t t = t0;
  for (int i = 0; i < 12; ++i) {
    const char* names[] = {"gemm.fwd", "relu.fwd", "gemm.bwd_data"};
    trace.activities.push_back(kernel(names[i % 3], i % 2, t, t + 1000 + 37 * i));
    t += 700;
  }
  Activity copy = kernel("memcpy HtoD", 0, t0 + 50, t0 + 90);
  copy.kind = ActivityKind::memcpy;
  copy.bytes = 4096;
  trace.activities.push_back(copy);
  sort_by_start(trace);
  return trace;
}

TEST(NsysSqliteTest, KernelSummarySqlEqualsKernelTable) {
  ScratchDir dir;
  const Trace trace = kernel_trace();
  NsysSqliteWriter().write(trace, dir / "trace.sqlite");

  SqliteDatabase db(dir / "trace.sqlite", SqliteDatabase::Mode::read_only);
  SqliteStatement summary = db.prepare(
      "SELECT s.value, count(*), sum(k.end - k.start), avg(k.end - k.start), "
      "min(k.end - k.start), max(k.end - k.start) "
      "FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s ON k.shortName = s.id GROUP BY 1");
  std::map<std::string, KernelStats> sql;
  while (summary.step()) {
    KernelStats row;
    row.calls = static_cast<size_t>(summary.integer(1));
    row.total_ns = summary.integer(2);
    row.mean_ns = summary.real(3);
    row.min_ns = summary.integer(4);
    row.max_ns = summary.integer(5);
    sql[summary.text(0)] = row;
  }
  MetricsScope kernels_only;
  kernels_only.kinds = {ActivityKind::kernel};
  const std::vector<KernelStats> ours = kernel_table(trace, kernels_only);
  ASSERT_EQ(sql.size(), ours.size());
  for (const KernelStats& row : ours) {
    SCOPED_TRACE(row.name);
    ASSERT_TRUE(sql.count(row.name));
    EXPECT_EQ(sql[row.name].calls, row.calls);
    EXPECT_EQ(sql[row.name].total_ns, row.total_ns);
    EXPECT_DOUBLE_EQ(sql[row.name].mean_ns, row.mean_ns);
    EXPECT_EQ(sql[row.name].min_ns, row.min_ns);
    EXPECT_EQ(sql[row.name].max_ns, row.max_ns);
  }
}

TEST(NsysSqliteTest, WritesTheNsysTablesAndColumns) {
  ScratchDir dir;
  NsysSqliteWriter().write(test_files::sample_trace(), dir / "trace.sqlite");
  SqliteDatabase db(dir / "trace.sqlite", SqliteDatabase::Mode::read_only);
  for (const char* table :
       {"StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS",
        "META_DATA_EXPORT", "TARGET_INFO_GPU", "TARGET_INFO_SESSION_START_TIME"})
    EXPECT_TRUE(db.has_table(table)) << table;
  const auto kernel_columns = db.columns("CUPTI_ACTIVITY_KIND_KERNEL");
  for (const char* column :
       {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "gridX", "gridY",
        "gridZ", "blockX", "blockY", "blockZ", "shortName", "demangledName", "globalPid"})
    EXPECT_TRUE(kernel_columns.count(column)) << column;

  // The sample's memcpy moved 4096 bytes host to device (copyKind 1) on device 1.
  SqliteStatement memcpy =
      db.prepare("SELECT bytes, copyKind, deviceId, streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY");
  ASSERT_TRUE(memcpy.step());
  EXPECT_EQ(memcpy.integer(0), 4096);
  EXPECT_EQ(memcpy.integer(1), 1);
  EXPECT_EQ(memcpy.integer(2), 1);
  EXPECT_EQ(memcpy.integer(3), 1);

  // Ranges are NVTX push/pop ranges with text, the lane as the tid of globalTid.
  SqliteStatement nvtx = db.prepare(
      "SELECT text, eventType, globalTid % 0x1000000, end - start FROM NVTX_EVENTS "
      "WHERE text = 'forward'");
  ASSERT_TRUE(nvtx.step());
  EXPECT_EQ(nvtx.integer(1), 59);
  EXPECT_EQ(nvtx.integer(2), 1);
  EXPECT_EQ(nvtx.integer(3), 998);
  SqliteStatement session = db.prepare("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME");
  ASSERT_TRUE(session.step());
  EXPECT_GT(session.integer(0), 1'600'000'000'000'000'000);
}

TEST(NsysSqliteTest, RoundTripsEveryField) {
  ScratchDir dir;
  Trace trace = test_files::sample_trace();
  const Activity& last = trace.activities.back();
  Activity host = kernel("host callback", 2, last.start_ns, last.end_ns + 9);
  host.device = -1;
  host.flops = 12.5;
  trace.activities.push_back(host);
  sort_by_start(trace);
  NsysSqliteWriter().write(trace, dir / "trace.sqlite");
  test_files::expect_same_trace(trace, read_nsys_sqlite(dir / "trace.sqlite"));
}

// A database shaped like a real `nsys export --type sqlite`: no tunescope tables,
// names through StringIds ids, NVTX text through textId, OS thread ids.
TEST(NsysSqliteTest, ReadsARealNsysShapedExport) {
  ScratchDir dir;
  {
    SqliteDatabase db(dir / "report.sqlite", SqliteDatabase::Mode::create);
    db.exec(R"SQL(
      CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
      INSERT INTO StringIds VALUES (1, 'void sgemm_kernel<float>(int, float const*)'),
        (2, 'sgemm_kernel'), (3, 'cudaLaunchKernel_v7000'), (4, 'train step');
      CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
        deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
        correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
        shortName INTEGER NOT NULL, gridX INTEGER NOT NULL);
      INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2000, 7000, 0, 1, 7, 11, 305419896 * 16777216, 1, 2, 80),
        (8000, 9000, 1, 2, 13, 12, 305419896 * 16777216, 1, 2, 80);
      CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
        deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
        bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL);
      INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (500, 900, 0, 7, 10, 65536, 2);
      CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
        globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL);
      INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1000, 1500, 4660 * 16777216 + 4661, 11, 3);
      CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
        text TEXT, globalTid INTEGER, textId INTEGER);
      INSERT INTO NVTX_EVENTS VALUES (100, 9500, 59, NULL, 4660 * 16777216 + 4661, 4),
        (200, NULL, 34, 'a mark', 4660 * 16777216 + 4661, NULL),
        (300, 400, 60, 'on another thread', 4660 * 16777216 + 4700, NULL);
      CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT);
      INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA H100'), (0, 1, 'NVIDIA H100');
    )SQL");
  }
  const Trace trace = read_nsys_sqlite(dir / "report.sqlite");
  EXPECT_EQ(trace.metadata.backend, "cuda");
  EXPECT_EQ(trace.metadata.machine, "NVIDIA H100 x2");
  ASSERT_EQ(trace.activities.size(), 4u);
  const Activity& copy = trace.activities[0];
  EXPECT_EQ(copy.kind, ActivityKind::memcpy);
  EXPECT_EQ(copy.name, "Memcpy DtoH");
  EXPECT_EQ(copy.bytes, 65536);
  const Activity& launch = trace.activities[1];
  EXPECT_EQ(launch.kind, ActivityKind::overhead);
  EXPECT_EQ(launch.name, "cudaLaunchKernel_v7000");
  EXPECT_EQ(launch.device, -1);
  EXPECT_EQ(launch.correlation, 11u);
  const Activity& sgemm = trace.activities[2];
  EXPECT_EQ(sgemm.name, "sgemm_kernel");  // shortName
  EXPECT_EQ(sgemm.stream, 7);
  EXPECT_EQ(sgemm.correlation, 11u);
  EXPECT_EQ(trace.activities[3].device, 1);
  EXPECT_EQ(trace.activities[3].stream, 13);

  ASSERT_EQ(trace.ranges.size(), 2u);  // the mark is not a range
  EXPECT_EQ(trace.ranges[0].name, "train step");
  EXPECT_EQ(trace.ranges[1].name, "on another thread");
  EXPECT_NE(trace.ranges[0].lane, trace.ranges[1].lane);
  EXPECT_EQ(trace.ranges[0].lane, launch.stream);  // same OS thread, same lane

  // The launch's correlation id is the edge to its kernel (analysis::DependencyGraph).
  EXPECT_EQ(analysis::build_dependency_graph(trace).launch_edges, 1u);
}

void expect_rejected(const std::filesystem::path& path, const std::string& problem) {
  try {
    read_nsys_sqlite(path);
    FAIL() << "expected " << path << " to be rejected (" << problem << ")";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path.string() + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(problem), std::string::npos) << message;
  }
}

TEST(NsysSqliteTest, RejectsMissingNonSqliteAndForeignDatabases) {
  ScratchDir dir;
  expect_rejected(dir / "absent.sqlite", "No such file");
  test_files::write_bytes(dir / "text.sqlite", "SELECT * FROM nothing;\n");
  expect_rejected(dir / "text.sqlite", "not an SQLite database");
  {
    SqliteDatabase db(dir / "results.db", SqliteDatabase::Mode::create);
    db.exec("CREATE TABLE trials (id INTEGER PRIMARY KEY, config TEXT)");
  }
  expect_rejected(dir / "results.db", "not an Nsight Systems export");
  // An SQLite header followed by garbage.
  std::string broken = test_files::read_bytes(dir / "results.db").substr(0, 100);
  broken += std::string(4000, '\x7f');
  test_files::write_bytes(dir / "broken.sqlite", broken);
  try {
    read_nsys_sqlite(dir / "broken.sqlite");
    FAIL() << "a corrupt database was read";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind((dir / "broken.sqlite").string() + ": ", 0), 0u)
        << e.what();
  }
}

TEST(NsysSqliteTest, UnwritablePathThrowsNamingIt) {
  ScratchDir dir;
  const auto path = dir / "missing" / "trace.sqlite";
  try {
    NsysSqliteWriter().write(kernel_trace(), path);
    FAIL() << "expected a failure";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ": cannot write trace", 0), 0u)
        << e.what();
  }
}

TEST(NsysSqliteTest, OverwritesAnExistingFile) {
  ScratchDir dir;
  test_files::write_bytes(dir / "trace.sqlite", "old contents");
  const Trace trace = kernel_trace();
  NsysSqliteWriter().write(trace, dir / "trace.sqlite");
  test_files::expect_same_trace(trace, read_nsys_sqlite(dir / "trace.sqlite"));
}

// Exports from before TUNESCOPE_RECORDS kept range ids still read, without them.
TEST(NsysSqliteTest, ReadsSideRecordsWithoutRangeIds) {
  ScratchDir dir;
  Trace trace = kernel_trace();
  trace.activities.front().range_id = 7;
  NsysSqliteWriter().write(trace, dir / "trace.sqlite");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "trace.sqlite").c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "ALTER TABLE TUNESCOPE_RECORDS DROP COLUMN rangeId", nullptr, nullptr,
                         nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  trace.activities.front().range_id = 0;
  test_files::expect_same_trace(trace, read_nsys_sqlite(dir / "trace.sqlite"));
}

}  // namespace
}  // namespace tunescope::profiler
