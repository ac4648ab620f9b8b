// Tests of reading PyTorch profiler traces: a real one from Debian's torch 1.13 (legacy
// list form) and a hand-made Kineto object-form trace with CUDA kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "TraceTestFiles.h"
#include "profiler/ChromeTraceReader.h"
#include "profiler/Metrics.h"

namespace tunescope::profiler {
namespace {

const std::filesystem::path kData = std::filesystem::path(TUNESCOPE_TEST_DATA_DIR) / "pytorch";

const Range* find_range(const Trace& trace, const std::string& name) {
  const auto it = std::find_if(trace.ranges.begin(), trace.ranges.end(),
                               [&](const Range& r) { return r.name == name; });
  return it == trace.ranges.end() ? nullptr : &*it;
}

TEST(PyTorchTraceReadTest, ReadsLegacyListFormOfTorch113) {
  const auto path = kData / "lenet5-cpu-torch1.13-legacy.json";
  const Trace trace = read_chrome_trace(path);
  // Every event of the file is a CPU op in pid "CPU functions".
  const auto events = nlohmann::json::parse(test_files::read_bytes(path));
  ASSERT_TRUE(events.is_array());
  EXPECT_EQ(trace.ranges.size(), events.size());
  EXPECT_TRUE(trace.activities.empty());
  EXPECT_EQ(trace.metadata.backend, "cpu");
  EXPECT_EQ(trace.metadata.extra.at("source"), "pytorch-profiler (legacy)");

  const Range* step = find_range(trace, "ProfilerStep#0");
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->category, RangeCategory::iteration);
  const Range* forward = find_range(trace, "forward");
  ASSERT_NE(forward, nullptr);
  EXPECT_EQ(forward->category, RangeCategory::phase);
  EXPECT_LE(step->start_ns, forward->start_ns);
  EXPECT_GE(step->end_ns, forward->end_ns);
  const Range* conv = find_range(trace, "aten::conv2d");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->category, RangeCategory::layer);
  // One thread (tid 1): one lane.
  for (const Range& r : trace.ranges) EXPECT_EQ(r.lane, 0) << r.name;
}

TEST(PyTorchTraceReadTest, ReadsKinetoObjectFormWithKernels) {
  const Trace trace = read_chrome_trace(kData / "kineto-cuda-handmade.json");
  constexpr int64_t base = 1'700'000'000'000'000'000;
  EXPECT_EQ(trace.metadata.backend, "cuda");
  EXPECT_EQ(trace.metadata.machine, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(trace.metadata.extra.at("source"), "pytorch-profiler (kineto)");

  // Kernels, memcpy and memset; cuda_runtime calls, flows, spans and markers skipped.
  ASSERT_EQ(trace.activities.size(), 4u);
  const Activity& conv = trace.activities[0];
  EXPECT_EQ(conv.kind, ActivityKind::kernel);
  EXPECT_EQ(conv.name.rfind("void implicit_convolve_sgemm<float", 0), 0u);
  EXPECT_EQ(conv.device, 0);
  EXPECT_EQ(conv.stream, 7);
  EXPECT_EQ(conv.correlation, 901u);
  EXPECT_EQ(conv.start_ns, base + 130'125);
  EXPECT_EQ(conv.end_ns, base + 155'625);
  const Activity& memset = trace.activities[1];
  EXPECT_EQ(memset.kind, ActivityKind::memset);
  EXPECT_EQ(memset.stream, 13);
  EXPECT_EQ(memset.bytes, 1024);
  EXPECT_EQ(memset.duration_ns(), 1001);
  EXPECT_EQ(trace.activities[2].stream, 13);
  const Activity& memcpy = trace.activities[3];
  EXPECT_EQ(memcpy.kind, ActivityKind::memcpy);
  EXPECT_EQ(memcpy.bytes, 6144);

  ASSERT_EQ(trace.ranges.size(), 5u);
  EXPECT_EQ(find_range(trace, "ProfilerStep#5")->category, RangeCategory::iteration);
  EXPECT_EQ(find_range(trace, "aten::conv2d")->category, RangeCategory::layer);
  EXPECT_EQ(find_range(trace, "aten::add_")->category, RangeCategory::layer);
  EXPECT_EQ(find_range(trace, "forward")->category, RangeCategory::phase);
  // Threads 4242 and 4300 of process 4242, and the GPU annotation lane: three lanes.
  std::set<int> lanes;
  for (const Range& r : trace.ranges) lanes.insert(r.lane);
  EXPECT_EQ(lanes.size(), 3u);
  EXPECT_NE(find_range(trace, "aten::add_")->lane, find_range(trace, "aten::conv2d")->lane);

  // The metrics see both streams: the memset and add kernel overlap the conv kernel.
  const Concurrency c = concurrency(trace);
  EXPECT_EQ(c.max_in_flight, 2);
  EXPECT_EQ(c.concurrent_ns, 1'001 + 3'500);
}

TEST(PyTorchTraceReadTest, RejectsABadCategoryArgNamingFileAndEvent) {
  test_files::ScratchDir dir;
  test_files::write_bytes(dir / "bad.json", R"({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "x", "pid": 1, "tid": 1, "ts": 1, "dur": 1,
     "args": {"category": "epoch"}}]})");
  try {
    read_chrome_trace(dir / "bad.json");
    FAIL() << "accepted an unknown range category";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind((dir / "bad.json").string() + ": event 0: 'category'", 0), 0u) << message;
    EXPECT_NE(message.find("epoch"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace tunescope::profiler
