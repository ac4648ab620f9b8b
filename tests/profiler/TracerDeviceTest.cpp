// The host Tracer with a device tracer attached (a scripted fake, no GPU): started,
// stopped and collected with the Tracer, every opened range pushed and popped on its
// thread (also when recording stopped in between), device activities merged and sorted
// with the range ids they were launched in, and a device tracer that cannot start
// leaving host tracing running and saying why in the metadata.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "profiler/DeviceTracer.h"
#include "profiler/Tracer.h"

namespace tunescope::profiler {
namespace {

// Counts what the Tracer asks; "launches" a kernel into the innermost pushed range of
// the calling thread when the test calls launch().
class ScriptedDeviceTracer final : public DeviceTracer {
 public:
  std::string name() const override { return "scripted"; }
  bool start() override {
    calls.push_back("start");
    started = refuse_start.empty();
    return started;
  }
  void stop() override {
    calls.push_back("stop");
    started = false;
  }
  bool push_range(uint64_t range_id) override {
    thread_local_stack().push_back(range_id);
    ++pushes;
    return true;
  }
  void pop_range() override {
    ASSERT_FALSE(thread_local_stack().empty()) << "pop without push on this thread";
    thread_local_stack().pop_back();
    ++pops;
  }
  void collect_into(Trace& trace) override {
    calls.push_back("collect");
    trace.activities.insert(trace.activities.end(), launched.begin(), launched.end());
    launched.clear();
    trace.metadata.extra["scripted.records"] = "yes";
  }
  uint64_t dropped_records() const override { return dropped; }
  std::vector<std::string> errors() const override {
    return refuse_start.empty() ? std::vector<std::string>{}
                                : std::vector<std::string>{refuse_start};
  }

  // A kernel on `stream` at [start, end), tagged with the calling thread's innermost range.
  void launch(int stream, int64_t start, int64_t end) {
    Activity a;
    a.name = "device kernel";
    a.stream = stream;
    a.start_ns = start;
    a.end_ns = end;
    a.range_id = thread_local_stack().empty() ? 0 : thread_local_stack().back();
    launched.push_back(a);
  }
  static std::vector<uint64_t>& thread_local_stack() {
    thread_local std::vector<uint64_t> stack;
    return stack;
  }

  std::vector<std::string> calls;
  std::vector<Activity> launched;
  std::string refuse_start;
  bool started = false;
  int pushes = 0;
  int pops = 0;
  uint64_t dropped = 0;
};

TEST(TracerDeviceTest, DeviceTracerRunsWithTheTracerAndKernelsCarryTheirRangeIds) {
  Tracer tracer;
  auto owned = std::make_unique<ScriptedDeviceTracer>();
  ScriptedDeviceTracer& device = *owned;
  device.dropped = 3;
  tracer.attach_device_tracer(std::move(owned));
  EXPECT_EQ(tracer.device_tracer(), &device);

  tracer.start();
  EXPECT_TRUE(device.started);
  {
    RangeScope layer(&tracer, "conv1", RangeCategory::layer, 0, 0);
    {
      RangeScope op(&tracer, "cudnn:gemm.forward", RangeCategory::phase, 0, 0);
      device.launch(7, 1'000, 2'000);
    }
    device.launch(7, 3'000, 4'000);
  }
  device.launch(7, 5'000, 6'000);  // outside every range
  tracer.stop();
  EXPECT_FALSE(device.started);
  EXPECT_EQ(device.pushes, 2);
  EXPECT_EQ(device.pops, 2);

  const Trace trace = tracer.collect({});
  EXPECT_EQ(device.calls, (std::vector<std::string>{"start", "stop", "collect"}));
  ASSERT_EQ(trace.ranges.size(), 2u);
  ASSERT_EQ(trace.activities.size(), 3u);
  const Range& conv1 = trace.ranges[0];
  const Range& op = trace.ranges[1];
  EXPECT_EQ(conv1.name, "conv1");
  EXPECT_NE(conv1.id, 0u);
  EXPECT_NE(op.id, 0u);
  EXPECT_NE(op.id, conv1.id);
  EXPECT_EQ(trace.activities[0].range_id, op.id);
  EXPECT_EQ(trace.activities[1].range_id, conv1.id);
  EXPECT_EQ(trace.activities[2].range_id, 0u);
  EXPECT_EQ(trace.metadata.extra.at(kDeviceTracerKey), "scripted");
  EXPECT_EQ(trace.metadata.extra.at(kDroppedRecordsKey), "3");
  EXPECT_EQ(trace.metadata.extra.at("scripted.records"), "yes");
  EXPECT_EQ(trace.metadata.extra.count(kDeviceTracerErrorKey), 0u);
}

TEST(TracerDeviceTest,
     RangeClosedAfterStopStillPopsOnItsThreadAndRangesOpenedWhileStoppedPushNothing) {
  Tracer tracer;
  auto owned = std::make_unique<ScriptedDeviceTracer>();
  ScriptedDeviceTracer& device = *owned;
  tracer.attach_device_tracer(std::move(owned));

  { RangeScope before(&tracer, "before start", RangeCategory::run); }
  EXPECT_EQ(device.pushes, 0);

  tracer.start();
  std::thread lane([&] {
    Tracer::OpenRange phase = tracer.begin_range("forward", RangeCategory::phase);
    EXPECT_TRUE(phase.opened());
    EXPECT_TRUE(phase.device_pushed);
    tracer.stop();  // on another thread in real runs: the end must pop anyway
    tracer.end_range("forward", RangeCategory::phase, 0, 1, phase);
    EXPECT_FALSE(phase.opened());
    tracer.end_range("forward", RangeCategory::phase, 0, 1, phase);  // a second close does nothing
    EXPECT_TRUE(ScriptedDeviceTracer::thread_local_stack().empty());
  });
  lane.join();
  EXPECT_EQ(device.pushes, 1);
  EXPECT_EQ(device.pops, 1);
}

TEST(TracerDeviceTest, DeviceTracerThatCannotStartLeavesHostTracingAndSaysWhy) {
  Tracer tracer;
  auto owned = std::make_unique<ScriptedDeviceTracer>();
  ScriptedDeviceTracer& device = *owned;
  device.refuse_start = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
  tracer.attach_device_tracer(std::move(owned));

  tracer.start();
  { RangeScope step(&tracer, "train_step", RangeCategory::iteration); }
  tracer.stop();
  const Trace trace = tracer.collect({});
  ASSERT_EQ(trace.ranges.size(), 1u);  // host tracing went on
  EXPECT_EQ(trace.metadata.extra.at(kDeviceTracerErrorKey),
            "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
  // Not started, so not stopped.
  EXPECT_EQ(device.calls, (std::vector<std::string>{"start", "collect"}));

  // The next run starts cleanly: the old reason does not linger.
  device.refuse_start.clear();
  tracer.start();
  tracer.stop();
  EXPECT_EQ(tracer.collect({}).metadata.extra.count(kDeviceTracerErrorKey), 0u);
}

TEST(TracerDeviceTest, RangeIdsAreUniqueAcrossThreadsAndRuns) {
  Tracer tracer;
  tracer.start();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&tracer, t] {
      for (int i = 0; i < 100; ++i) RangeScope r(&tracer, "layer", RangeCategory::layer, 0, t);
    });
  for (auto& thread : threads) thread.join();
  tracer.stop();
  Trace first = tracer.collect({});
  tracer.start();
  { RangeScope r(&tracer, "again", RangeCategory::run); }
  tracer.stop();
  const Trace second = tracer.collect({});
  std::vector<uint64_t> ids;
  for (const Range& r : first.ranges) ids.push_back(r.id);
  for (const Range& r : second.ranges) ids.push_back(r.id);
  ASSERT_EQ(ids.size(), 401u);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
  EXPECT_NE(ids.front(), 0u);
}

TEST(DeviceTracerRegistry, MakesTheTracerRegisteredForABackendAndNothingForOthers) {
  EXPECT_EQ(make_device_tracer("no-such-backend"), nullptr);
  register_device_tracer("test-backend", [] { return std::make_unique<ScriptedDeviceTracer>(); });
  const auto made = make_device_tracer("test-backend");
  ASSERT_NE(made, nullptr);
  EXPECT_EQ(made->name(), "scripted");
  register_device_tracer("test-backend", nullptr);  // removes it
  EXPECT_EQ(make_device_tracer("test-backend"), nullptr);
}

}  // namespace
}  // namespace tunescope::profiler
