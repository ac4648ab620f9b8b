// Tests of reading PyTorch profiler traces: a real one from Debian's torch 1.13 (legacy
// list form) and a hand-made Kineto object-form trace with CUDA kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

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

// The operators doing most of their own work, counted from the file by a direct
// (quadratic) reading of the rule: an op's parent is the nearest earlier op of its
// thread (by start, longer first) that it starts inside (an empty op at the end counts,
// as the legacy form rounds to whole microseconds); an op is chosen when no ancestor is
// and its duration minus its children's is at least its children's.
std::map<std::string, int64_t> work_ops_of_legacy_file(const std::filesystem::path& path) {
  auto events = nlohmann::json::parse(test_files::read_bytes(path));
  std::vector<nlohmann::json> ops;
  for (auto& e : events) {
    const std::string name = e["name"];
    if (name.find("::") != std::string::npos && name.rfind("ProfilerStep#", 0) != 0)
      ops.push_back(e);
  }
  std::stable_sort(ops.begin(), ops.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return std::pair(a["ts"].get<double>(), -a["dur"].get<double>()) <
           std::pair(b["ts"].get<double>(), -b["dur"].get<double>());
  });
  const size_t n = ops.size();
  std::vector<long> parent(n, -1);
  std::vector<double> called(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const double s = ops[i]["ts"], d = ops[i]["dur"];
    for (long j = static_cast<long>(i) - 1; j >= 0; --j) {
      const double end = ops[j]["ts"].get<double>() + ops[j]["dur"].get<double>();
      if (ops[j]["tid"] == ops[i]["tid"] && (s < end || (s == end && d == 0))) {
        parent[i] = j;
        called[j] += d;
        break;
      }
    }
  }
  std::vector<bool> covered(n, false);
  std::map<std::string, int64_t> chosen;
  for (size_t i = 0; i < n; ++i) {
    if (parent[i] >= 0 && covered[parent[i]]) {
      covered[i] = true;
      continue;
    }
    const double d = ops[i]["dur"];
    if (d - std::min(called[i], d) >= called[i]) {
      covered[i] = true;
      ++chosen[ops[i]["name"].get<std::string>()];
    }
  }
  return chosen;
}

TEST(PyTorchTraceReadTest, CpuOnlyTraceGetsItsWorkingOperatorsAsActivities) {
  const auto path = kData / "lenet5-cpu-torch1.13-legacy.json";
  const Trace trace = read_chrome_trace(path);
  const std::map<std::string, int64_t> expected = work_ops_of_legacy_file(path);
  std::map<std::string, int64_t> calls;
  for (const KernelStats& k : summarize(trace).kernels) calls[k.name] = k.calls;
  EXPECT_EQ(calls, expected);
  EXPECT_GT(expected.size(), 5u);
  EXPECT_EQ(calls.count("aten::mkldnn_convolution"),
            1u);                               // it allocates through aten::empty, yet works
  EXPECT_EQ(calls.count("aten::conv2d"), 0u);  // it only calls
  EXPECT_EQ(trace.metadata.extra.at("activities"),
            "CPU operators doing most of their own work (the trace has no device kernels)");
  // Each activity is one of the ranges, on its lane.
  for (const Activity& a : trace.activities) {
    const auto same = std::find_if(trace.ranges.begin(), trace.ranges.end(), [&](const Range& r) {
      return r.name == a.name && r.start_ns == a.start_ns && r.end_ns == a.end_ns &&
             r.lane == a.stream;
    });
    EXPECT_NE(same, trace.ranges.end()) << a.name;
  }
}

TEST(PyTorchTraceReadTest, CpuOnlyKinetoTraceUsesWorkingOpsPerThread) {
  test_files::ScratchDir dir;
  // Two threads; ProfilerStep and a record_function label are not operators.
  test_files::write_bytes(dir / "cpu.json",
                          R"({"schemaVersion": 1, "deviceProperties": [], "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 7, "tid": 7, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 7, "tid": 7, "ts": 1, "dur": 50},
    {"ph": "X", "cat": "cpu_op", "name": "aten::convolution", "pid": 7, "tid": 7, "ts": 2, "dur": 40},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mkldnn_convolution", "pid": 7, "tid": 7, "ts": 3, "dur": 30},
    {"ph": "X", "cat": "cpu_op", "name": "aten::as_strided", "pid": 7, "tid": 7, "ts": 4, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 7, "tid": 7, "ts": 35, "dur": 2},
    {"ph": "X", "cat": "user_annotation", "name": "optimizer", "pid": 7, "tid": 7, "ts": 60, "dur": 30},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": 7, "tid": 7, "ts": 61, "dur": 5},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 7, "tid": 9, "ts": 2, "dur": 90}]})");
  const Trace trace = read_chrome_trace(dir / "cpu.json");
  EXPECT_EQ(trace.metadata.backend, "cpu");
  EXPECT_EQ(trace.ranges.size(), 9u);
  ASSERT_EQ(trace.activities.size(), 4u);  // not aten::as_strided: the convolution covers it
  std::map<std::string, int> lane_of;
  for (const Activity& a : trace.activities) lane_of[a.name] = a.stream;
  EXPECT_EQ(lane_of.count("aten::conv2d") + lane_of.count("aten::convolution"), 0u);
  EXPECT_EQ(lane_of.at("aten::mkldnn_convolution"), lane_of.at("aten::add_"));
  EXPECT_NE(lane_of.at("aten::mul"), lane_of.at("aten::add_"));
  const Activity& conv = trace.activities[1];  // by start: mul (2) then mkldnn (3)
  EXPECT_EQ(conv.name, "aten::mkldnn_convolution");
  EXPECT_EQ(conv.duration_ns(), 30'000);
  EXPECT_EQ(trace.activities[2].name, "aten::empty");  // after its sibling, not inside it
}

TEST(PyTorchTraceReadTest, ReadsKinetoObjectFormWithKernels) {
  const Trace trace = read_chrome_trace(kData / "kineto-cuda-handmade.json");
  constexpr int64_t base = 1'700'000'000'000'000'000;
  EXPECT_EQ(trace.metadata.backend, "cuda");
  EXPECT_EQ(trace.metadata.machine, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(trace.metadata.extra.at("source"), "pytorch-profiler (kineto)");

  // Kernels, memcpy and memset, and the two cuda_runtime calls as host launches (device
  // -1, their thread's lane, correlation kept); flows, spans and markers skipped.
  ASSERT_EQ(trace.activities.size(), 6u);
  const Activity& launch = trace.activities[0];
  EXPECT_EQ(launch.kind, ActivityKind::overhead);
  EXPECT_EQ(launch.name, "cudaLaunchKernel");
  EXPECT_EQ(launch.device, -1);
  EXPECT_EQ(launch.correlation, 901u);
  EXPECT_EQ(launch.start_ns, base + 120'000);
  EXPECT_EQ(trace.activities[1].correlation, 902u);
  EXPECT_EQ(trace.activities[1].stream, launch.stream);  // one thread, one lane
  const Activity& conv = trace.activities[2];
  EXPECT_EQ(conv.kind, ActivityKind::kernel);
  EXPECT_EQ(conv.name.str().rfind("void implicit_convolve_sgemm<float", 0), 0u);
  EXPECT_EQ(conv.device, 0);
  EXPECT_EQ(conv.stream, 7);
  EXPECT_EQ(conv.correlation, 901u);
  EXPECT_EQ(conv.start_ns, base + 130'125);
  EXPECT_EQ(conv.end_ns, base + 155'625);
  const Activity& memset = trace.activities[3];
  EXPECT_EQ(memset.kind, ActivityKind::memset);
  EXPECT_EQ(memset.stream, 13);
  EXPECT_EQ(memset.bytes, 1024);
  EXPECT_EQ(memset.duration_ns(), 1001);
  EXPECT_EQ(trace.activities[4].stream, 13);
  const Activity& memcpy = trace.activities[5];
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
    EXPECT_EQ(message.rfind((dir / "bad.json").string() + ": event 0: 'category'", 0), 0u)
        << message;
    EXPECT_NE(message.find("epoch"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace tunescope::profiler
