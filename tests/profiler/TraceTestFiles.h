// Helpers shared by the trace file tests: a scratch directory, a sample trace that
// exercises every field, and field-by-field equality for readable failures.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "profiler/Trace.h"
#include "tests/core/FileBytes.h"
#include "tests/core/ScratchDir.h"

namespace tunescope::profiler::test_files {

using tunescope::test_support::read_bytes;
using tunescope::test_support::ScratchDir;
using tunescope::test_support::write_bytes;

// `bytes` gzip-compressed into `path`, as a gzipped trace reaches a reader.
inline void write_gzip(const std::filesystem::path& path, const std::string& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

// Every kind and category, two devices, several lanes, nested ranges, names that need
// escaping, and host-clock timestamps large enough to lose nanoseconds in a double.
inline Trace sample_trace() {
  constexpr int64_t t0 = 987'654'321'012'345'677;  // ns, odd on purpose
  Trace trace;
  trace.metadata.machine = "Test CPU @ 3.0GHz x 16";
  trace.metadata.backend = "cpu";
  trace.metadata.config = "{\"schema\": \"tunescope.config/1\",\n \"layout\": \"NHWC\"}";
  trace.metadata.extra["model"] = "resnet18";
  trace.metadata.extra["note"] = "quote \" backslash \\ tab \t";

  const char* kinds_names[] = {"conv \"fwd\" <3x3>", "memcpy HtoD", "memset", "stream wait",
                               "launch"};
  int64_t t = t0;
  for (int i = 0; i < 5; ++i) {
    Activity a;
    a.kind = static_cast<ActivityKind>(i);
    a.name = kinds_names[i];
    a.device = i % 2;
    a.stream = i;
    a.start_ns = t;
    a.end_ns = t + 1001 + i;
    a.correlation = 100 + static_cast<uint64_t>(i);
    a.flops = i * 1.5e9 + 0.1;
    a.bytes = i * 4096.0;
    trace.activities.push_back(a);
    t += 333;
  }
  Activity unicode;
  unicode.name = "r\xc3\xa9sum\xc3\xa9 \xe2\x86\x92 pad";  // UTF-8
  unicode.device = 1;
  unicode.stream = 7;
  unicode.start_ns = t0 + 5000;
  unicode.end_ns = t0 + 5000;  // zero length
  trace.activities.push_back(unicode);

  const auto range = [&](const char* name, RangeCategory category, int64_t start, int64_t end,
                         int lane) {
    Range r;
    r.name = name;
    r.category = category;
    r.start_ns = start;
    r.end_ns = end;
    r.device = 0;
    r.lane = lane;
    trace.ranges.push_back(r);
  };
  range("run", RangeCategory::run, t0 - 10, t0 + 9000, 0);
  range("candidate 3", RangeCategory::candidate, t0 - 5, t0 + 8000, 0);
  range("iteration 0", RangeCategory::iteration, t0, t0 + 4000, 0);
  range("conv1", RangeCategory::layer, t0 + 1, t0 + 2000, 0);
  range("forward", RangeCategory::phase, t0 + 2, t0 + 1000, 1);
  // One flow of each kind, across devices and from the host (device -1).
  trace.flows.push_back(Flow{FlowKind::event, {0, 0, t0 + 1001}, {1, 3, t0 + 1500}});
  trace.flows.push_back(Flow{FlowKind::host, {0, 2, t0 + 1700}, {1, 1, t0 + 1801}});
  trace.flows.push_back(Flow{FlowKind::launch, {-1, 4, t0 + 1333}, {0, 4, t0 + 2333}});
  sort_by_start(trace);
  return trace;
}

inline void expect_same_trace(const Trace& expected, const Trace& actual) {
  EXPECT_EQ(expected.metadata.machine, actual.metadata.machine);
  EXPECT_EQ(expected.metadata.backend, actual.metadata.backend);
  EXPECT_EQ(expected.metadata.config, actual.metadata.config);
  EXPECT_EQ(expected.metadata.extra, actual.metadata.extra);
  ASSERT_EQ(expected.activities.size(), actual.activities.size());
  for (size_t i = 0; i < expected.activities.size(); ++i) {
    SCOPED_TRACE("activity " + std::to_string(i));
    const Activity& e = expected.activities[i];
    const Activity& a = actual.activities[i];
    EXPECT_EQ(e.kind, a.kind);
    EXPECT_EQ(e.name, a.name);
    EXPECT_EQ(e.device, a.device);
    EXPECT_EQ(e.stream, a.stream);
    EXPECT_EQ(e.start_ns, a.start_ns);
    EXPECT_EQ(e.end_ns, a.end_ns);
    EXPECT_EQ(e.correlation, a.correlation);
    EXPECT_EQ(e.flops, a.flops);
    EXPECT_EQ(e.bytes, a.bytes);
    EXPECT_EQ(e.range_id, a.range_id);
    EXPECT_EQ(e.rank, a.rank);
  }
  ASSERT_EQ(expected.ranges.size(), actual.ranges.size());
  for (size_t i = 0; i < expected.ranges.size(); ++i) {
    SCOPED_TRACE("range " + std::to_string(i));
    const Range& e = expected.ranges[i];
    const Range& a = actual.ranges[i];
    EXPECT_EQ(e.name, a.name);
    EXPECT_EQ(e.category, a.category);
    EXPECT_EQ(e.start_ns, a.start_ns);
    EXPECT_EQ(e.end_ns, a.end_ns);
    EXPECT_EQ(e.device, a.device);
    EXPECT_EQ(e.lane, a.lane);
    EXPECT_EQ(e.id, a.id);
    EXPECT_EQ(e.rank, a.rank);
  }
  ASSERT_EQ(expected.flows.size(), actual.flows.size());
  for (size_t i = 0; i < expected.flows.size(); ++i) {
    SCOPED_TRACE("flow " + std::to_string(i));
    const Flow& e = expected.flows[i];
    const Flow& a = actual.flows[i];
    EXPECT_EQ(e.kind, a.kind);
    EXPECT_EQ(e.from.device, a.from.device);
    EXPECT_EQ(e.from.stream, a.from.stream);
    EXPECT_EQ(e.from.ns, a.from.ns);
    EXPECT_EQ(e.to.device, a.to.device);
    EXPECT_EQ(e.to.stream, a.to.stream);
    EXPECT_EQ(e.to.ns, a.to.ns);
    EXPECT_EQ(e.from.rank, a.from.rank);
    EXPECT_EQ(e.to.rank, a.to.rank);
  }
}

}  // namespace tunescope::profiler::test_files
