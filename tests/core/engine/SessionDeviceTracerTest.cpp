// A training session on a backend with a registered device tracer (a recording fake
// registered for "cpu" in this test only): the session attaches it, the tracer starts,
// stops and collects it with itself, and every range the trainer opens while recording
// (iterations on the host, layers and phases spanning several tasks on the lanes) is
// pushed and popped exactly once on the thread that opened it, so on cuda every kernel
// launched inside a range can be attributed to it.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"
#include "profiler/DeviceTracer.h"

namespace tunescope {
namespace {

using profiler::DeviceTracer;

// Shared by the fake and the test: what the device tracer was asked, per thread.
struct Log {
  std::mutex mutex;
  std::vector<std::string> calls;
  std::map<std::thread::id, std::vector<uint64_t>> open;  // per thread, innermost last
  std::set<uint64_t> pushed;
  int pops = 0;
  int bad_pops = 0;  // a pop on a thread with nothing pushed
};

class RecordingDeviceTracer final : public DeviceTracer {
 public:
  explicit RecordingDeviceTracer(Log& log) : log_(log) {}
  std::string name() const override { return "recording"; }
  bool start() override {
    note("start");
    return true;
  }
  void stop() override { note("stop"); }
  bool push_range(uint64_t id) override {
    std::lock_guard lock(log_.mutex);
    log_.open[std::this_thread::get_id()].push_back(id);
    log_.pushed.insert(id);
    return true;
  }
  void pop_range() override {
    std::lock_guard lock(log_.mutex);
    auto& stack = log_.open[std::this_thread::get_id()];
    if (stack.empty()) {
      ++log_.bad_pops;
      return;
    }
    stack.pop_back();
    ++log_.pops;
  }
  void collect_into(profiler::Trace&) override { note("collect"); }
  uint64_t dropped_records() const override { return 0; }
  std::vector<std::string> errors() const override { return {}; }

 private:
  void note(const char* call) {
    std::lock_guard lock(log_.mutex);
    log_.calls.push_back(call);
  }
  Log& log_;
};

// Registers the fake for "cpu" for the test's duration only.
struct CpuDeviceTracerRegistration {
  explicit CpuDeviceTracerRegistration(Log& log) {
    profiler::register_device_tracer(
        "cpu", [&log] { return std::make_unique<RecordingDeviceTracer>(log); });
  }
  ~CpuDeviceTracerRegistration() { profiler::register_device_tracer("cpu", nullptr); }
};

TEST(SessionDeviceTracer, EveryRangeOfATracedStepIsPushedAndPoppedOnItsThread) {
  Log log;
  CpuDeviceTracerRegistration registration(log);
  SessionOptions options;
  options.model = "lenet5";
  options.data = "fake";
  options.fake_train_count = 64;
  options.fake_test_count = 8;
  options.batch = 16;
  knobs::threads.set(options.knobs, 3);
  options.prefetch = 0;
  options.conv = parse_conv_choice("direct");
  knobs::streams.set(options.knobs, 3);  // gradient and update lanes: phases on several lanes
  knobs::async_update.set(options.knobs, true);
  TrainingSession session(options);
  ASSERT_NE(session.tracer().device_tracer(), nullptr);
  EXPECT_EQ(session.tracer().device_tracer()->name(), "recording");

  session.train_steps(1);  // warm-up, untraced: pushes nothing
  EXPECT_TRUE(log.pushed.empty());
  session.tracer().start();
  session.train_steps(2);
  session.tracer().stop();
  const profiler::Trace trace = session.tracer().collect({});

  EXPECT_EQ(log.calls, (std::vector<std::string>{"start", "stop", "collect"}));
  EXPECT_EQ(trace.metadata.extra.at(profiler::kDeviceTracerKey), "recording");
  std::set<uint64_t> range_ids;
  for (const profiler::Range& r : trace.ranges) range_ids.insert(r.id);
  EXPECT_EQ(range_ids.size(), trace.ranges.size()) << "range ids are unique";
  EXPECT_EQ(log.pushed, range_ids) << "every recorded range was pushed, and nothing else";
  EXPECT_EQ(log.pops, static_cast<int>(log.pushed.size()));
  EXPECT_EQ(log.bad_pops, 0);
  for (const auto& [thread, stack] : log.open)
    EXPECT_TRUE(stack.empty()) << stack.size() << " left open on a thread";
}

TEST(SessionDeviceTracer, BackendsWithoutADeviceTracerGetNone) {
  SessionOptions options;
  options.model = "lenet5";
  options.data = "fake";
  options.fake_train_count = 16;
  options.fake_test_count = 8;
  options.batch = 16;
  knobs::threads.set(options.knobs, 1);
  options.prefetch = 0;
  TrainingSession session(options);
  EXPECT_EQ(session.tracer().device_tracer(), nullptr);
  session.tracer().start();
  session.train_steps(1);
  session.tracer().stop();
  EXPECT_EQ(session.tracer().collect({}).metadata.extra.count(profiler::kDeviceTracerKey), 0u);
}

}  // namespace
}  // namespace tunescope
