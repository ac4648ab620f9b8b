// Range ids and the ranges device work was launched in, through the trace files: Chrome
// and Kineto JSON and the nsys SQLite export keep Range::id and Activity::range_id
// exactly, both JSON layouts link launches to kernels with flows, and the Kineto layout draws a
// launch made inside a range on that range's thread, so the launch -> kernel flow starts inside its
// layer, as PyTorch traces nest cudaLaunchKernel in their annotations.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "TraceTestFiles.h"
#include "profiler/ChromeTraceReader.h"
#include "profiler/ChromeTraceWriter.h"
#include "profiler/KinetoTraceWriter.h"
#include "profiler/NsysSqliteReader.h"
#include "profiler/NsysSqliteWriter.h"

namespace tunescope::profiler {
namespace {

using json = nlohmann::json;
using test_files::ScratchDir;

// Layer conv1 (range 41) on lane 2 of device 0 launches a kernel on stream 7 through
// cudaLaunchKernel (correlation 5); a copy outside any range has no range id.
Trace attributed_trace() {
  Trace trace;
  trace.metadata.backend = "cuda";
  Range conv1;
  conv1.name = "conv1";
  conv1.category = RangeCategory::layer;
  conv1.start_ns = 1'000;
  conv1.end_ns = 9'000;
  conv1.lane = 2;
  conv1.id = 41;
  trace.ranges.push_back(conv1);

  Activity launch;
  launch.kind = ActivityKind::overhead;
  launch.name = "cudaLaunchKernel";
  launch.device = -1;
  launch.stream = 12345;  // the OS thread
  launch.start_ns = 2'000;
  launch.end_ns = 2'500;
  launch.correlation = 5;
  launch.range_id = 41;
  Activity kernel;
  kernel.name = "sgemm";
  kernel.stream = 7;
  kernel.start_ns = 3'000;
  kernel.end_ns = 8'000;
  kernel.correlation = 5;
  kernel.range_id = 41;
  Activity copy;
  copy.kind = ActivityKind::memcpy;
  copy.name = "Memcpy HtoD";
  copy.stream = 7;
  copy.start_ns = 10'000;
  copy.end_ns = 11'000;
  trace.activities = {launch, kernel, copy};
  return trace;
}

TEST(RangeAttributionExport, ChromeKinetoAndNsysSqliteKeepRangeIds) {
  ScratchDir dir;
  const Trace trace = attributed_trace();
  ChromeTraceWriter().write(trace, dir / "chrome.json");
  test_files::expect_same_trace(trace, read_chrome_trace(dir / "chrome.json"));
  KinetoTraceWriter().write(trace, dir / "kineto.json");
  test_files::expect_same_trace(trace, read_chrome_trace(dir / "kineto.json"));
  NsysSqliteWriter().write(trace, dir / "trace.sqlite");
  test_files::expect_same_trace(trace, read_nsys_sqlite(dir / "trace.sqlite"));
}

TEST(RangeAttributionExport, KinetoLaunchSitsOnItsRangesThreadAndFlowsToTheKernel) {
  ScratchDir dir;
  KinetoTraceWriter().write(attributed_trace(), dir / "kineto.json");
  const json document = json::parse(test_files::read_bytes(dir / "kineto.json"));
  const json* range = nullptr;
  const json* launch = nullptr;
  std::vector<json> flows;
  for (const json& e : document.at("traceEvents")) {
    if (e.value("name", "") == "conv1" && e.value("ph", "") == "X") range = &e;
    if (e.value("name", "") == "cudaLaunchKernel") launch = &e;
    if (e.value("cat", "") == "ac2g") flows.push_back(e);
  }
  ASSERT_TRUE(range && launch);
  EXPECT_EQ(launch->at("pid"), range->at("pid"));
  EXPECT_EQ(launch->at("tid"), range->at("tid"));
  // Inside the range in time, so viewers nest it there.
  EXPECT_GE(launch->at("ts").get<double>(), range->at("ts").get<double>());
  EXPECT_LE(launch->at("ts").get<double>() + launch->at("dur").get<double>(),
            range->at("ts").get<double>() + range->at("dur").get<double>());
  ASSERT_EQ(flows.size(), 2u);
  const json& start = flows[0].at("ph") == "s" ? flows[0] : flows[1];
  const json& end = flows[0].at("ph") == "s" ? flows[1] : flows[0];
  EXPECT_EQ(start.at("pid"), range->at("pid"));
  EXPECT_EQ(start.at("tid"), range->at("tid"));
  EXPECT_EQ(start.at("ts"), launch->at("ts"));
  EXPECT_EQ(end.at("pid"), 0);  // device 0
  EXPECT_EQ(end.at("tid"), 7);
  EXPECT_EQ(start.at("id"), 5);
  EXPECT_EQ(end.at("id"), 5);
}

TEST(RangeAttributionExport, ChromeLinksTheLaunchToItsKernel) {
  ScratchDir dir;
  ChromeTraceWriter().write(attributed_trace(), dir / "chrome.json");
  const json document = json::parse(test_files::read_bytes(dir / "chrome.json"));
  const json* launch = nullptr;
  const json* kernel = nullptr;
  std::vector<json> flows;
  for (const json& e : document.at("traceEvents")) {
    if (e.value("name", "") == "cudaLaunchKernel") launch = &e;
    if (e.value("name", "") == "sgemm") kernel = &e;
    if (e.value("cat", "") == "ac2g") flows.push_back(e);
  }
  ASSERT_TRUE(launch && kernel);
  ASSERT_EQ(flows.size(), 2u);
  const json& start = flows[0].at("ph") == "s" ? flows[0] : flows[1];
  const json& end = flows[0].at("ph") == "s" ? flows[1] : flows[0];
  for (const char* key : {"pid", "tid", "ts"}) {
    EXPECT_EQ(start.at(key), launch->at(key)) << key;
    EXPECT_EQ(end.at(key), kernel->at(key)) << key;
  }
  EXPECT_EQ(start.at("id"), 5);
  EXPECT_EQ(end.at("bp"), "e");
  EXPECT_EQ(launch->at("args").at("range_id"), 41);
}

}  // namespace
}  // namespace tunescope::profiler
