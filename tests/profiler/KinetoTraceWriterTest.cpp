// Tests of the Kineto-layout writer: the field names PyTorch-trace tools look for,
// exact round trips through ChromeTraceReader, flows and nesting.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "TraceTestFiles.h"
#include "profiler/ChromeTraceReader.h"
#include "profiler/KinetoTraceWriter.h"

namespace tunescope::profiler {
namespace {

using json = nlohmann::json;
using test_files::ScratchDir;

json parse_file(const std::filesystem::path& path) {
  return json::parse(test_files::read_bytes(path));
}

std::vector<json> events_where(const json& document, const std::string& key,
                               const std::string& value) {
  std::vector<json> found;
  for (const json& e : document.at("traceEvents"))
    if (e.contains(key) && e[key] == value) found.push_back(e);
  return found;
}

Activity activity(ActivityKind kind, const char* name, int device, int stream, int64_t start,
                  int64_t end, uint64_t correlation = 0) {
  Activity a;
  a.kind = kind;
  a.name = name;
  a.device = device;
  a.stream = stream;
  a.start_ns = start;
  a.end_ns = end;
  a.correlation = correlation;
  return a;
}

TEST(KinetoTraceWriterTest, RoundTripsEveryFieldPlainAndGzip) {
  ScratchDir dir;
  const Trace trace = test_files::sample_trace();
  for (const char* name : {"trace.json", "trace.json.gz"}) {
    SCOPED_TRACE(name);
    KinetoTraceWriter().write(trace, dir / name);
    test_files::expect_same_trace(trace, read_chrome_trace(dir / name));
  }
  // gzip really is gzip: the magic bytes.
  EXPECT_EQ(test_files::read_bytes(dir / "trace.json.gz").substr(0, 2), "\x1f\x8b");
}

TEST(KinetoTraceWriterTest, WritesKinetoTopLevelAndEventFields) {
  ScratchDir dir;
  const Trace trace = test_files::sample_trace();
  KinetoTraceWriter().write(trace, dir / "trace.json");
  const json document = parse_file(dir / "trace.json");
  EXPECT_EQ(document.at("schemaVersion"), 1);
  EXPECT_TRUE(document.at("deviceProperties").is_array());
  EXPECT_EQ(document.at("deviceProperties").size(), 2u);  // devices 0 and 1
  EXPECT_TRUE(document.at("displayTimeUnit").is_string());
  EXPECT_EQ(document.at("distributedInfo").at("rank"), 0);
  EXPECT_EQ(document.at("baseTimeNanoseconds"), trace.ranges.front().start_ns);

  const std::vector<json> kernels = events_where(document, "cat", "kernel");
  ASSERT_EQ(kernels.size(), 2u);  // the conv and the zero-length unicode kernel
  const Activity& conv = trace.activities.front();
  const json& k = kernels.front();
  EXPECT_EQ(k.at("ph"), "X");
  EXPECT_EQ(k.at("name"), conv.name.str());
  EXPECT_EQ(k.at("pid"), conv.device);
  EXPECT_EQ(k.at("tid"), conv.stream);
  for (const char* arg : {"device", "stream", "correlation", "flops", "bytes"})
    EXPECT_TRUE(k.at("args").contains(arg)) << arg;
  EXPECT_EQ(k.at("args").at("correlation"), conv.correlation);
  EXPECT_DOUBLE_EQ(
      k.at("ts").get<double>() * 1000,
      static_cast<double>(conv.start_ns - document.at("baseTimeNanoseconds").get<int64_t>()));
  EXPECT_EQ(events_where(document, "cat", "gpu_memcpy").size(), 1u);
  EXPECT_EQ(events_where(document, "cat", "gpu_memset").size(), 1u);
  EXPECT_EQ(events_where(document, "cat", "cuda_sync").size(), 1u);
  EXPECT_EQ(events_where(document, "cat", "user_annotation").size(), trace.ranges.size());

  // Every pid and (pid, tid) of a complete event is named.
  std::set<json> named_processes, named_threads;
  for (const json& m : events_where(document, "ph", "M")) {
    if (m.at("name") == "process_name") named_processes.insert(m.at("pid"));
    if (m.at("name") == "thread_name")
      named_threads.insert(json::array({m.at("pid"), m.at("tid")}));
  }
  for (const json& e : events_where(document, "ph", "X")) {
    EXPECT_TRUE(named_processes.count(e.at("pid"))) << e.dump();
    EXPECT_TRUE(named_threads.count(json::array({e.at("pid"), e.at("tid")}))) << e.dump();
  }
}

TEST(KinetoTraceWriterTest, TimesHaveNanosecondDigitsAndRankIsWhereHtaLooks) {
  ScratchDir dir;
  KinetoTraceWriter().write(test_files::sample_trace(), dir / "trace.json");
  const std::string text = test_files::read_bytes(dir / "trace.json");
  // HTA finds the rank with the regex "rank":\s+(\d+).
  EXPECT_TRUE(std::regex_search(text, std::regex(R"("rank":\s+0)")));
  EXPECT_TRUE(std::regex_search(text, std::regex(R"("ts":\d+\.\d{3},"dur":\d+\.\d{3})")));
}

TEST(KinetoTraceWriterTest, LinksLaunchToKernelByCorrelation) {
  ScratchDir dir;
  Trace trace;
  trace.metadata.backend = "cuda";
  trace.activities.push_back(
      activity(ActivityKind::overhead, "cudaLaunchKernel", 0, 0, 100, 150, 42));
  trace.activities.push_back(activity(ActivityKind::kernel, "sgemm", 0, 7, 200, 900, 42));
  trace.activities.push_back(activity(ActivityKind::kernel, "unlaunched", 0, 7, 1000, 1100, 43));
  KinetoTraceWriter().write(trace, dir / "flows.json");
  const json document = parse_file(dir / "flows.json");
  const std::vector<json> flows = events_where(document, "cat", "ac2g");
  ASSERT_EQ(flows.size(), 2u);
  const json& start = flows[0].at("ph") == "s" ? flows[0] : flows[1];
  const json& end = flows[0].at("ph") == "s" ? flows[1] : flows[0];
  EXPECT_EQ(start.at("id"), 42);
  EXPECT_EQ(end.at("id"), 42);
  EXPECT_EQ(end.at("tid"), 7);
  EXPECT_EQ(end.at("bp"), "e");
  EXPECT_EQ(end.at("ts").get<double>(), 0.1);  // kernel start, relative to the first record
  test_files::expect_same_trace(trace, read_chrome_trace(dir / "flows.json"));
}

TEST(KinetoTraceWriterTest, PartialOverlapsOnOneStreamGoToSeparateTids) {
  ScratchDir dir;
  Trace trace;
  trace.activities.push_back(activity(ActivityKind::kernel, "a", 0, 3, 0, 100));
  trace.activities.push_back(activity(ActivityKind::kernel, "b", 0, 3, 50, 150));
  KinetoTraceWriter().write(trace, dir / "overlap.json");
  const std::vector<json> kernels = events_where(parse_file(dir / "overlap.json"), "cat", "kernel");
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_NE(kernels[0].at("tid"), kernels[1].at("tid"));
  EXPECT_EQ(kernels[1].at("args").at("stream"), 3);
  test_files::expect_same_trace(trace, read_chrome_trace(dir / "overlap.json"));
}

TEST(KinetoTraceWriterTest, UnwritablePathThrowsNamingItAndLeavesNothing) {
  ScratchDir dir;
  const auto path = dir / "no-such-dir" / "trace.json";
  try {
    KinetoTraceWriter().write(test_files::sample_trace(), path);
    FAIL() << "expected a failure";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ": cannot write trace", 0), 0u)
        << e.what();
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace tunescope::profiler
