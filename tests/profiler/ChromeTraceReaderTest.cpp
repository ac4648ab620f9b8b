// Tests of the Chrome trace reader: what it accepts from foreign files, and that every
// rejection names the file and the problem.
#include <gtest/gtest.h>
#include <zlib.h>

#include "TraceTestFiles.h"
#include "profiler/ChromeTraceReader.h"
#include "profiler/ChromeTraceWriter.h"

namespace tunescope::profiler {
namespace {

using test_files::ScratchDir;

// Reads `path` expecting a failure whose message names the file and contains `problem`.
void expect_rejected(const std::filesystem::path& path, const std::string& problem) {
  try {
    read_chrome_trace(path);
    FAIL() << "expected " << path << " to be rejected (" << problem << ")";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path.string() + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(problem), std::string::npos) << message;
  }
}

void write_gzip(const std::filesystem::path& path, const std::string& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

TEST(ChromeTraceReaderTest, RejectsMissingFile) {
  ScratchDir dir;
  expect_rejected(dir / "absent.json", "No such file");
}

TEST(ChromeTraceReaderTest, RejectsADirectory) {
  ScratchDir dir;
  expect_rejected(dir.path(), "is a directory");
}

TEST(ChromeTraceReaderTest, RejectsNotJson) {
  ScratchDir dir;
  test_files::write_bytes(dir / "notes.txt", "these are not the events you are looking for\n");
  expect_rejected(dir / "notes.txt", "not JSON");
}

TEST(ChromeTraceReaderTest, RejectsEmptyFile) {
  ScratchDir dir;
  test_files::write_bytes(dir / "empty.json", "");
  expect_rejected(dir / "empty.json", "empty file");
}

TEST(ChromeTraceReaderTest, RejectsJsonWithoutTraceEvents) {
  ScratchDir dir;
  test_files::write_bytes(dir / "config.json",
                          R"({"schema": "tunescope.config/1", "layout": "NHWC"})");
  expect_rejected(dir / "config.json", "not a Chrome trace: no traceEvents array");
  test_files::write_bytes(dir / "object.json", R"({"traceEvents": {"ph": "X"}})");
  expect_rejected(dir / "object.json", "no traceEvents array");
  test_files::write_bytes(dir / "number.json", "42");
  expect_rejected(dir / "number.json", "no traceEvents array");
}

TEST(ChromeTraceReaderTest, RejectsTruncatedJson) {
  ScratchDir dir;
  ChromeTraceWriter().write(test_files::sample_trace(), dir / "full.json");
  const std::string full = test_files::read_bytes(dir / "full.json");
  test_files::write_bytes(dir / "cut.json", full.substr(0, full.size() / 2));
  expect_rejected(dir / "cut.json", "truncated JSON");
}

TEST(ChromeTraceReaderTest, RejectsTruncatedGzip) {
  ScratchDir dir;
  ChromeTraceWriter().write(test_files::sample_trace(), dir / "full.json.gz");
  const std::string full = test_files::read_bytes(dir / "full.json.gz");
  test_files::write_bytes(dir / "cut.json.gz", full.substr(0, full.size() - 12));
  expect_rejected(dir / "cut.json.gz", "truncated gzip");
}

TEST(ChromeTraceReaderTest, RejectsEventMissingAField) {
  ScratchDir dir;
  test_files::write_bytes(dir / "no-ts.json", R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ok", "pid": 0, "tid": 0, "ts": 1, "dur": 2},
    {"ph": "X", "cat": "kernel", "name": "broken", "pid": 0, "tid": 0, "dur": 2}]})");
  expect_rejected(dir / "no-ts.json", "event 1: 'ts' is missing");
  test_files::write_bytes(
      dir / "bad-name.json",
      R"({"traceEvents": [{"ph": "X", "cat": "layer", "name": 7, "pid": 0, "tid": 1000, "ts": 1, "dur": 2}]})");
  expect_rejected(dir / "bad-name.json", "event 0: 'name' is not a string");
  test_files::write_bytes(dir / "not-object.json", R"({"traceEvents": [1, 2]})");
  expect_rejected(dir / "not-object.json", "event 0: not an object");
}

TEST(ChromeTraceReaderTest, ReadsForeignEventsSkippingWhatIsNotOurs) {
  // The bare array form, microsecond times without our otherData, pid/tid without args,
  // and events of other tools (other categories, begin/end and instant phases).
  ScratchDir dir;
  test_files::write_bytes(dir / "foreign.json", R"([
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 0, "tid": 9, "ts": 0.5, "dur": 1},
    {"ph": "B", "cat": "kernel", "name": "begin-end pairs are not read", "pid": 0, "tid": 0, "ts": 1},
    {"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 2, "tid": 7, "ts": 10.25, "dur": 3.5},
    {"ph": "i", "name": "marker", "pid": 0, "tid": 0, "ts": 2},
    {"ph": "X", "cat": "layer", "name": "conv1", "pid": 2, "tid": 1003, "ts": 10, "dur": 5}
  ])");
  const Trace trace = read_chrome_trace(dir / "foreign.json");
  ASSERT_EQ(trace.activities.size(), 1u);
  EXPECT_EQ(trace.activities[0].name, "sgemm");
  EXPECT_EQ(trace.activities[0].device, 2);
  EXPECT_EQ(trace.activities[0].stream, 7);
  EXPECT_EQ(trace.activities[0].start_ns, 10'250);
  EXPECT_EQ(trace.activities[0].end_ns, 13'750);
  ASSERT_EQ(trace.ranges.size(), 1u);
  EXPECT_EQ(trace.ranges[0].lane, 3);
  EXPECT_EQ(trace.ranges[0].category, RangeCategory::layer);
}

TEST(ChromeTraceReaderTest, DetectsGzipByContentNotName) {
  ScratchDir dir;
  const Trace trace = test_files::sample_trace();
  ChromeTraceWriter().write(trace, dir / "trace.json.gz");
  std::filesystem::rename(dir / "trace.json.gz", dir / "renamed.json");
  test_files::expect_same_trace(trace, read_chrome_trace(dir / "renamed.json"));

  write_gzip(
      dir / "array.trace",
      R"([{"ph": "X", "cat": "memcpy", "name": "HtoD", "pid": 0, "tid": 1, "ts": 1, "dur": 1}])");
  EXPECT_EQ(read_chrome_trace(dir / "array.trace").activities.at(0).kind, ActivityKind::memcpy);
}

TEST(ChromeTraceReaderTest, SortsEventsByStartTime) {
  ScratchDir dir;
  test_files::write_bytes(dir / "unsorted.json", R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "late", "pid": 0, "tid": 0, "ts": 5, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "early", "pid": 0, "tid": 0, "ts": 1, "dur": 1}]})");
  const Trace trace = read_chrome_trace(dir / "unsorted.json");
  ASSERT_EQ(trace.activities.size(), 2u);
  EXPECT_EQ(trace.activities[0].name, "early");
}

}  // namespace
}  // namespace tunescope::profiler
