// Tests of the Chrome trace writer: round trips through the reader (plain and gzip),
// the fields viewers need, nesting on each tid, and all-or-nothing writes.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "TraceTestFiles.h"
#include "profiler/ChromeTraceReader.h"
#include "profiler/ChromeTraceWriter.h"

namespace tunescope::profiler {
namespace {

using json = nlohmann::json;
using test_files::ScratchDir;

std::vector<json> events_with_ph(const json& doc, const std::string& ph) {
  std::vector<json> events;
  for (const json& e : doc.at("traceEvents"))
    if (e.at("ph") == ph) events.push_back(e);
  return events;
}

TEST(ChromeTraceWriterTest, PlainRoundTripKeepsEveryField) {
  ScratchDir dir;
  const Trace trace = test_files::sample_trace();
  ChromeTraceWriter().write(trace, dir / "trace.json");
  test_files::expect_same_trace(trace, read_chrome_trace(dir / "trace.json"));
}

TEST(ChromeTraceWriterTest, GzipRoundTripWritesRealGzip) {
  ScratchDir dir;
  const Trace trace = test_files::sample_trace();
  ChromeTraceWriter().write(trace, dir / "trace.json.gz");
  const std::string bytes = test_files::read_bytes(dir / "trace.json.gz");
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  test_files::expect_same_trace(trace, read_chrome_trace(dir / "trace.json.gz"));
}

TEST(ChromeTraceWriterTest, EmptyTraceRoundTrips) {
  ScratchDir dir;
  Trace trace;
  trace.metadata.backend = "cpu";
  ChromeTraceWriter().write(trace, dir / "empty.json");
  test_files::expect_same_trace(trace, read_chrome_trace(dir / "empty.json"));
}

TEST(ChromeTraceWriterTest, JsonHasTheFieldsViewersNeed) {
  ScratchDir dir;
  const Trace trace = test_files::sample_trace();
  ChromeTraceWriter().write(trace, dir / "trace.json");
  const json doc = json::parse(test_files::read_bytes(dir / "trace.json"));

  EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
  const json& other = doc.at("otherData");
  EXPECT_EQ(other.at("machine"), trace.metadata.machine);
  EXPECT_EQ(other.at("backend"), "cpu");
  EXPECT_EQ(other.at("config"), trace.metadata.config);
  const int64_t origin = other.at("time_origin_ns").get<int64_t>();
  EXPECT_EQ(origin, trace.ranges.front().start_ns);  // the earliest record

  const auto complete = events_with_ph(doc, "X");
  ASSERT_EQ(complete.size(), trace.activities.size() + trace.ranges.size());
  std::set<std::pair<int, int>> used_threads;
  for (const json& e : complete) {
    for (const char* key : {"name", "cat", "pid", "tid", "ts", "dur", "args"})
      EXPECT_TRUE(e.contains(key)) << key << " in " << e;
    EXPECT_TRUE(e.at("ts").is_number());
    // Microseconds with nanosecond resolution: ts * 1000 is a whole number.
    const double ts_ns = e.at("ts").get<double>() * 1000;
    EXPECT_NEAR(ts_ns, std::round(ts_ns), 1e-6);
    used_threads.insert({e.at("pid").get<int>(), e.at("tid").get<int>()});
  }

  // The first activity: kernel on device 0, stream 0.
  const Activity& a = trace.activities.front();
  const auto first = std::find_if(complete.begin(), complete.end(),
                                  [](const json& e) { return e.at("cat") == "kernel"; });
  ASSERT_NE(first, complete.end());
  EXPECT_EQ((*first).at("name"), a.name.str());
  // Offset by one: Perfetto treats pid 0 and tid 0 specially.
  EXPECT_EQ((*first).at("pid"), 1);
  EXPECT_EQ((*first).at("tid"), 1);
  EXPECT_EQ((*first).at("pid"), chrome_trace::pid_of_device(a.device));
  EXPECT_EQ((*first).at("tid"), chrome_trace::activity_tid(a.stream));
  EXPECT_DOUBLE_EQ((*first).at("ts").get<double>(),
                   static_cast<double>(a.start_ns - origin) / 1000);
  EXPECT_DOUBLE_EQ((*first).at("dur").get<double>(), 1.001);
  const json& args = (*first).at("args");
  EXPECT_EQ(args.at("stream"), a.stream);
  EXPECT_EQ(args.at("device"), a.device);
  EXPECT_EQ(args.at("correlation"), a.correlation);
  EXPECT_EQ(args.at("flops").get<double>(), a.flops);
  EXPECT_EQ(args.at("bytes").get<double>(), a.bytes);

  // Ranges live on their own tid per lane, with the range category as cat.
  for (const json& e : complete) {
    if (e.at("cat") == "iteration") {
      EXPECT_EQ(e.at("tid"), chrome_trace::range_tid(0));
      EXPECT_EQ(e.at("tid"), 1000);
      EXPECT_EQ(e.at("name"), "iteration 0");
    }
    if (e.at("cat") == "phase") {
      EXPECT_EQ(e.at("tid"), chrome_trace::range_tid(1));
    }
  }

  // Every used pid and tid is named.
  std::map<int, std::string> process_names;
  std::map<std::pair<int, int>, std::string> thread_names;
  for (const json& e : events_with_ph(doc, "M")) {
    if (e.at("name") == "process_name") process_names[e.at("pid")] = e.at("args").at("name");
    if (e.at("name") == "thread_name")
      thread_names[{e.at("pid").get<int>(), e.at("tid").get<int>()}] = e.at("args").at("name");
  }
  EXPECT_EQ(process_names.at(chrome_trace::pid_of_device(0)), "CPU");
  EXPECT_EQ(process_names.at(chrome_trace::pid_of_device(1)), "CPU 1");
  for (const auto& thread : used_threads)
    EXPECT_TRUE(thread_names.count(thread)) << thread.first << "/" << thread.second;
  EXPECT_EQ(thread_names.at({1, chrome_trace::activity_tid(0)}), "lane 0");
  EXPECT_EQ(thread_names.at({1, chrome_trace::range_tid(0)}), "lane 0 ranges");
  for (const json& e : doc.at("traceEvents")) {
    EXPECT_GT(e.at("pid").get<int>(), 0) << e;
    if (e.contains("tid")) {
      EXPECT_GT(e.at("tid").get<int>(), 0) << e;
    }
  }
}

TEST(ChromeTraceWriterTest, PartiallyOverlappingRecordsGoToSeparateTids) {
  ScratchDir dir;
  Trace trace;
  trace.metadata.backend = "cuda";
  const auto add_range = [&](const char* name, int64_t start, int64_t end) {
    Range r;
    r.name = name;
    r.category = RangeCategory::phase;
    r.start_ns = start;
    r.end_ns = end;
    r.lane = 2;
    trace.ranges.push_back(r);
  };
  add_range("forward", 0, 100'000);
  add_range("update", 50'000, 150'000);  // async update overlaps the next forward
  add_range("inner", 10'000, 20'000);
  add_range("after", 100'000, 120'000);  // starts exactly where forward ends
  sort_by_start(trace);
  ChromeTraceWriter().write(trace, dir / "t.json");

  const json doc = json::parse(test_files::read_bytes(dir / "t.json"));
  std::map<std::string, int64_t> tid;
  for (const json& e : events_with_ph(doc, "X")) tid[e.at("name")] = e.at("tid");
  EXPECT_EQ(tid.at("forward"), chrome_trace::range_tid(2));
  EXPECT_EQ(tid.at("inner"), chrome_trace::range_tid(2));
  EXPECT_EQ(tid.at("after"), chrome_trace::range_tid(2));
  EXPECT_EQ(tid.at("update"), chrome_trace::range_tid(2, 1));

  std::set<std::string> thread_names;
  for (const json& e : events_with_ph(doc, "M"))
    if (e.at("name") == "thread_name")
      thread_names.insert(e.at("args").at("name").get<std::string>());
  EXPECT_TRUE(thread_names.count("stream 2 ranges"));
  EXPECT_TRUE(thread_names.count("stream 2 ranges (2)"));
  EXPECT_EQ(events_with_ph(doc, "M").front().at("args").at("name"), "GPU 0");

  // The reader restores the true lane from args.
  for (const Range& r : read_chrome_trace(dir / "t.json").ranges) EXPECT_EQ(r.lane, 2);
}

TEST(ChromeTraceWriterTest, OverwritesAnExistingFile) {
  ScratchDir dir;
  test_files::write_bytes(dir / "trace.json", "old contents");
  const Trace trace = test_files::sample_trace();
  ChromeTraceWriter().write(trace, dir / "trace.json");
  test_files::expect_same_trace(trace, read_chrome_trace(dir / "trace.json"));
}

TEST(ChromeTraceWriterTest, FailedWriteThrowsNamingThePathAndLeavesNothing) {
  ScratchDir dir;
  const auto missing = dir / "no-such-dir" / "trace.json";
  try {
    ChromeTraceWriter().write(test_files::sample_trace(), missing);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  }

  // The rename onto a directory fails after the data was written: the temp file must go.
  std::filesystem::create_directory(dir / "taken");
  EXPECT_THROW(ChromeTraceWriter().write(test_files::sample_trace(), dir / "taken"),
               std::runtime_error);
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    left.push_back(entry.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{"taken"});
}

TEST(ChromeTraceWriterTest, WorksThroughTheTraceWriterInterface) {
  ScratchDir dir;
  const std::unique_ptr<TraceWriter> writer = std::make_unique<ChromeTraceWriter>();
  writer->write(test_files::sample_trace(), dir / "via-interface.json.gz");
  EXPECT_EQ(read_chrome_trace(dir / "via-interface.json.gz").activities.size(),
            test_files::sample_trace().activities.size());
}

}  // namespace
}  // namespace tunescope::profiler
