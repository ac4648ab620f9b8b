// Tests of the Chrome trace reader: what it accepts from foreign files, and that every
// rejection names the file and the problem.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "TraceTestFiles.h"
#include "profiler/ChromeTraceReader.h"
#include "profiler/ChromeTraceWriter.h"

namespace tunescope::profiler {
namespace {

using test_files::ScratchDir;
using test_files::write_gzip;

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
    {"ph": "X", "cat": "python_function", "name": "train.py(12): step", "pid": 0, "tid": 9, "ts": 0.5, "dur": 1},
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

namespace tunescope::profiler {
namespace {

using test_files::ScratchDir;

std::string rejection(const std::filesystem::path& path, const TraceReadOptions& options = {}) {
  try {
    read_chrome_trace(path, options);
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path.string() + ": ", 0), 0u) << message;
    return message.substr(path.string().size() + 2);
  }
  ADD_FAILURE() << path << " was accepted";
  return {};
}

// Every cut of a valid trace before its closing bracket fails as truncated, at the cut.
void expect_every_cut_truncated(const ScratchDir& dir, const std::string& full) {
  const size_t end = full.find_last_not_of(" \n\r\t") + 1;
  for (size_t cut = 1; cut < end; ++cut) {
    test_files::write_bytes(dir / "cut.json", full.substr(0, cut));
    const std::string problem = rejection(dir / "cut.json");
    // A cut inside a number or literal may still be read as one; the document stays open.
    EXPECT_EQ(problem, "truncated JSON: input ends at byte " + std::to_string(cut))
        << "cut at " << cut;
  }
}

TEST(ChromeTraceStreamingTest, EveryTruncationOfOurTracesSaysWhereTheInputEnds) {
  ScratchDir dir;
  ChromeTraceWriter().write(test_files::sample_trace(), dir / "full.json");
  expect_every_cut_truncated(dir, test_files::read_bytes(dir / "full.json"));
}

TEST(ChromeTraceStreamingTest, EveryTruncationOfAPyTorchListTraceSaysWhereTheInputEnds) {
  ScratchDir dir;
  const std::string full = test_files::read_bytes(std::filesystem::path(TUNESCOPE_TEST_DATA_DIR) /
                                                  "pytorch" / "lenet5-cpu-torch1.13-legacy.json");
  ASSERT_GT(full.size(), 1000u);
  // Every 7th cut keeps the test fast while hitting every kind of token.
  const size_t end = full.find_last_not_of(" \n\r\t") + 1;
  for (size_t cut = 1; cut < end; cut += 7) {
    test_files::write_bytes(dir / "cut.json", full.substr(0, cut));
    EXPECT_EQ(rejection(dir / "cut.json"),
              "truncated JSON: input ends at byte " + std::to_string(cut));
  }
}

TEST(ChromeTraceStreamingTest, EveryTruncationOfAGzipTraceIsRefused) {
  ScratchDir dir;
  ChromeTraceWriter().write(test_files::sample_trace(), dir / "full.json.gz");
  const std::string full = test_files::read_bytes(dir / "full.json.gz");
  for (size_t cut = 1; cut < full.size(); ++cut) {
    test_files::write_bytes(dir / "cut.json.gz", full.substr(0, cut));
    const std::string problem = rejection(dir / "cut.json.gz");
    // Past gzip's 10-byte header, zlib knows it is a cut gzip stream.
    if (cut >= 10) {
      EXPECT_EQ(problem, "truncated gzip data") << "cut at " << cut;
    }
  }
}

TEST(ChromeTraceStreamingTest, SyntaxErrorsNameTheByte) {
  ScratchDir dir;
  const std::string text = R"({"traceEvents": [{"ph": "X", "name": x}]})";
  test_files::write_bytes(dir / "bad.json", text);
  EXPECT_EQ(rejection(dir / "bad.json"), "not JSON: unexpected 'x' at byte " +
                                             std::to_string(text.find('x')) + ", expected a value");
  test_files::write_bytes(dir / "trailing.json", R"([] [])");
  EXPECT_EQ(rejection(dir / "trailing.json"),
            "not JSON: unexpected '[' after the document at byte 3");
  test_files::write_bytes(dir / "escape.json", R"([{"name": "\q"}])");
  EXPECT_EQ(rejection(dir / "escape.json"), "not JSON: invalid escape \\'q' at byte 11");
  test_files::write_bytes(dir / "utf8.json", "[{\"name\": \"ok \xff\"}]");
  EXPECT_EQ(rejection(dir / "utf8.json"),
            "not JSON: invalid UTF-8 byte 0xff in a string at byte 14");
  test_files::write_bytes(dir / "number.json", R"({"traceEvents": [], "n": 01})");
  EXPECT_EQ(rejection(dir / "number.json"),
            "not JSON: unexpected '1' at byte 26, expected ',' or '}'");
}

TEST(ChromeTraceStreamingTest, EventErrorsNameTheEventAndItsByte) {
  ScratchDir dir;
  const std::string first =
      R"({"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 0, "ts": 1, "dur": 1})";
  const std::string text =
      "[" + first + ",\n " +
      R"({"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 0, "ts": 1e400, "dur": 1}])";
  test_files::write_bytes(dir / "range.json", text);
  EXPECT_EQ(rejection(dir / "range.json"),
            "event 1: 'ts' is out of range (the event starts at byte " +
                std::to_string(first.size() + 4) + ")");
}

TEST(ChromeTraceStreamingTest, ForeignJsonIsNotATrace) {
  ScratchDir dir;
  // A package manifest, with an array that is not at the top level.
  test_files::write_bytes(
      dir / "package.json",
      R"({"name": "x", "version": "1.0", "files": [{"traceEvents": []}], "deep": [[[[{}]]]]})");
  EXPECT_EQ(rejection(dir / "package.json"), "not a Chrome trace: no traceEvents array");
  test_files::write_bytes(dir / "string.json", R"("traceEvents")");
  EXPECT_EQ(rejection(dir / "string.json"), "not a Chrome trace: no traceEvents array");
}

TEST(ChromeTraceStreamingTest, ReadsEscapesAndUnicodeNames) {
  ScratchDir dir;
  test_files::write_bytes(dir / "names.json", R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "tab\t quote\" \u00e9 \ud83d\ude00 \/", "pid": 0, "tid": 0, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "caf)"
                                              "\xc3\xa9"
                                              R"(", "pid": 0, "tid": 0, "ts": 2, "dur": 1,
     "args": {"unknown": {"nested": [1, 2, {"deep": null}]}, "flops": 5, "bytes": null}}]})");
  const Trace trace = read_chrome_trace(dir / "names.json");
  ASSERT_EQ(trace.activities.size(), 2u);
  EXPECT_EQ(trace.activities[0].name, "tab\t quote\" \xc3\xa9 \xf0\x9f\x98\x80 /");
  EXPECT_EQ(trace.activities[1].name, "caf\xc3\xa9");
  EXPECT_EQ(trace.activities[1].flops, 5);
  EXPECT_EQ(trace.activities[1].bytes, 0);
}

TEST(ChromeTraceStreamingTest, RefusesMoreRecordsThanTheLimit) {
  ScratchDir dir;
  ChromeTraceWriter().write(test_files::sample_trace(), dir / "trace.json");
  TraceReadOptions options;
  options.max_records = 4;
  EXPECT_EQ(rejection(dir / "trace.json", options)
                .rfind("too many events: more than 4 activities and ranges", 0),
            0u);
  options.max_records = 11;  // exactly the sample's 6 activities and 5 ranges
  EXPECT_EQ(read_chrome_trace(dir / "trace.json", options).ranges.size(), 5u);
}

TEST(ChromeTraceStreamingTest, RefusesATraceNeedingMoreMemoryThanTheLimit) {
  ScratchDir dir;
  ChromeTraceWriter().write(test_files::sample_trace(), dir / "trace.json");
  TraceReadOptions options;
  options.max_memory_bytes = 1000;
  EXPECT_EQ(rejection(dir / "trace.json", options)
                .rfind("too large: its records would need more than 1000 bytes", 0),
            0u);
}

TEST(ChromeTraceStreamingTest, ReportsProgressAndStopsWhenCancelled) {
  ScratchDir dir;
  // Big enough for several reads of the reader's 1 MiB chunk.
  Trace big;
  for (int i = 0; i < 40'000; ++i) {
    Activity a;
    a.name = "kernel " + std::to_string(i % 50);
    a.start_ns = i * 1000;
    a.end_ns = a.start_ns + 500;
    big.activities.push_back(a);
  }
  ChromeTraceWriter().write(big, dir / "big.json");
  const uint64_t size = std::filesystem::file_size(dir / "big.json");
  ASSERT_GT(size, 3u << 20);

  std::vector<uint64_t> done;
  TraceReadOptions options;
  options.progress = [&](uint64_t bytes, uint64_t total) {
    EXPECT_EQ(total, size);
    done.push_back(bytes);
  };
  EXPECT_EQ(read_chrome_trace(dir / "big.json", options).activities.size(), big.activities.size());
  ASSERT_GE(done.size(), 3u);
  EXPECT_TRUE(std::is_sorted(done.begin(), done.end()));
  EXPECT_EQ(done.back(), size);

  // Cancelled after the second chunk: the read stops there.
  std::atomic<bool> cancel{false};
  int calls = 0;
  options.cancel = &cancel;
  options.progress = [&](uint64_t, uint64_t) {
    if (++calls == 2) cancel = true;
  };
  EXPECT_THROW(read_chrome_trace(dir / "big.json", options), TraceReadCancelled);
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace tunescope::profiler
