// The CUPTI tracer against a fake CUPTI: enabling the kinds, the buffer
// requested/completed path with hand-built records, dropped-record counting, clean
// failure when CUPTI refuses, and the logging call wrapper. No GPU needed.
#ifdef HAS_CUPTI

#include "profiler/cupti/CuptiTracer.h"

#include <gtest/gtest.h>

#include "FakeCuptiApi.h"
#include "profiler/Clock.h"

namespace tunescope::profiler::cupti {
namespace {

using test_support::FakeCuptiApi;
using test_support::kernel_record;
using test_support::memcpy_record;
using test_support::runtime_record;

TEST(CuptiTracer, StartRegistersBuffersEnablesKindsAndMeasuresTheClock) {
  FakeCuptiApi api;
  api.gpu_now = 9'000'000'000'000;
  CuptiTracer tracer(api);
  const int64_t before = now_ns();
  ASSERT_TRUE(tracer.start()) << (tracer.errors().empty() ? "" : tracer.errors().front());
  const int64_t after = now_ns();

  EXPECT_EQ(api.calls.front(), "register");
  EXPECT_EQ(api.enabled, CuptiTracerOptions{}.kinds());
  ASSERT_TRUE(tracer.clock_offset());
  // The GPU reading maps into the host window around start().
  const int64_t mapped = tracer.clock_offset()->to_host(api.gpu_now);
  EXPECT_GE(mapped, before);
  EXPECT_LE(mapped, after);

  tracer.stop();
  EXPECT_TRUE(api.enabled.empty());
  EXPECT_NE(std::find(api.calls.begin(), api.calls.end(),
                      "flush " + std::to_string(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)),
            api.calls.end());
}

TEST(CuptiTracer, CompletedBuffersBecomeSortedActivities) {
  FakeCuptiApi api;
  api.names[{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000}] =
      "cudaLaunchKernel_v7000";
  CuptiTracer tracer(api);
  ASSERT_TRUE(tracer.start());
  const uint64_t t0 = api.gpu_now;
  // CUPTI delivers per buffer, not in time order.
  api.deliver([&](test_support::BufferWriter& buffer) {
    buffer.add(kernel_record("_Z7add_onePfi", t0 + 30'000, t0 + 40'000, 0, 13, 2));
    buffer.add(runtime_record(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, t0 + 20'000,
                              t0 + 25'000, 77, 2));
  });
  api.deliver([&](test_support::BufferWriter& buffer) {
    buffer.add(
        memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1 << 20, t0 + 1'000, t0 + 9'000, 0, 13, 1));
  });
  tracer.stop();

  Trace trace;
  tracer.collect_into(trace);
  ASSERT_EQ(trace.activities.size(), 3u);
  const int64_t host0 = tracer.clock_offset()->to_host(t0);
  EXPECT_EQ(trace.activities[0].kind, ActivityKind::memcpy);
  EXPECT_EQ(trace.activities[0].start_ns, host0 + 1'000);
  EXPECT_EQ(trace.activities[0].bytes, 1 << 20);
  EXPECT_EQ(trace.activities[1].name, "cudaLaunchKernel");
  EXPECT_EQ(trace.activities[1].device, -1);
  EXPECT_EQ(trace.activities[2].name, "add_one(float*, int)");
  EXPECT_EQ(trace.activities[2].stream, 13);
  EXPECT_EQ(trace.activities[2].start_ns, host0 + 30'000);
  EXPECT_EQ(trace.activities[2].correlation, trace.activities[1].correlation);
  EXPECT_EQ(trace.metadata.extra.at("cupti.records"), "3");
  EXPECT_EQ(trace.metadata.extra.at("cupti.dropped_records"), "0");

  // Collected activities are handed over once.
  Trace again;
  tracer.collect_into(again);
  EXPECT_TRUE(again.activities.empty());
}

TEST(CuptiTracer, AStreamWaitingForAnotherStreamsEventBecomesAnEventFlow) {
  FakeCuptiApi api;
  CuptiTracer tracer(api);
  ASSERT_TRUE(tracer.start());
  const uint64_t t0 = api.gpu_now;
  // Calls: 1 k1 on stream 13, 2 record event 5 on 13, 3 stream 14 waits for it, 4 k2 on
  // 14. The wait's record comes in a later buffer than the kernels.
  api.deliver([&](test_support::BufferWriter& buffer) {
    buffer.add(kernel_record("k1", t0 + 1'000, t0 + 9'000, 0, 13, 1));
    buffer.add(kernel_record("k2", t0 + 9'500, t0 + 12'000, 0, 14, 4));
    buffer.add(test_support::cuda_event_record(5, 0, 13, 2));
  });
  api.deliver([&](test_support::BufferWriter& buffer) {
    auto wait = test_support::synchronization_record(
        CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, t0 + 500, t0 + 600, 0, 14, 3);
    wait.cudaEventId = 5;
    buffer.add(wait);
  });
  tracer.stop();
  Trace trace;
  tracer.collect_into(trace);
  ASSERT_EQ(trace.flows.size(), 1u);
  const int64_t host0 = tracer.clock_offset()->to_host(t0);
  EXPECT_EQ(trace.flows[0].kind, FlowKind::event);
  EXPECT_EQ(trace.flows[0].from.stream, 13);
  EXPECT_EQ(trace.flows[0].from.ns, host0 + 9'000);  // k1's end
  EXPECT_EQ(trace.flows[0].to.stream, 14);
  EXPECT_EQ(trace.flows[0].to.ns, host0 + 9'500);  // k2's start
  EXPECT_EQ(trace.metadata.extra.at("cupti.event_flows"), "1");
}

TEST(CuptiTracer, ReportsDroppedRecordsOfEveryBuffer) {
  FakeCuptiApi api;
  api.dropped_per_buffer = 5;
  CuptiTracer tracer(api);
  ASSERT_TRUE(tracer.start());
  api.deliver([](test_support::BufferWriter&) {});
  api.deliver([&](test_support::BufferWriter& buffer) {
    buffer.add(kernel_record("k", api.gpu_now + 1, api.gpu_now + 2, 0, 1, 1));
  });
  tracer.stop();
  EXPECT_EQ(tracer.dropped_records(), 10u);
  Trace trace;
  tracer.collect_into(trace);
  EXPECT_EQ(trace.metadata.extra.at("cupti.dropped_records"), "10");
  EXPECT_EQ(trace.activities.size(), 1u);
}

TEST(CuptiTracer, BuffersCompletedAfterStopAreFreedNotConverted) {
  FakeCuptiApi api;
  CuptiTracer tracer(api);
  ASSERT_TRUE(tracer.start());
  tracer.stop();
  api.deliver([&](test_support::BufferWriter& buffer) {
    buffer.add(kernel_record("late", api.gpu_now + 1, api.gpu_now + 2, 0, 1, 1));
  });
  Trace trace;
  tracer.collect_into(trace);
  EXPECT_TRUE(trace.activities.empty());
}

TEST(CuptiTracer, RefusedEnableLeavesNothingEnabledAndSaysWhy) {
  FakeCuptiApi api;
  api.fail_enable_of[CUPTI_ACTIVITY_KIND_MEMSET] = true;
  {
    CuptiTracer tracer(api);
    EXPECT_FALSE(tracer.start());
    EXPECT_FALSE(tracer.started());
    EXPECT_TRUE(api.enabled.empty());
    ASSERT_EQ(tracer.errors().size(), 1u);
    EXPECT_NE(tracer.errors()[0].find("CUPTI_ERROR_NOT_COMPATIBLE"), std::string::npos)
        << tracer.errors()[0];
  }
  // The failed tracer released the process-wide slot.
  api.fail_enable_of.clear();
  CuptiTracer next(api);
  EXPECT_TRUE(next.start());
}

TEST(CuptiTracer, OneStartedTracerPerProcess) {
  FakeCuptiApi api_a, api_b;
  CuptiTracer a(api_a), b(api_b);
  ASSERT_TRUE(a.start());
  EXPECT_FALSE(b.start());
  ASSERT_FALSE(b.errors().empty());
  EXPECT_NE(b.errors()[0].find("already started"), std::string::npos);
  a.stop();
  EXPECT_TRUE(b.start());
}

TEST(CuptiTracer, FailedClockReadingFailsStart) {
  FakeCuptiApi api;
  api.timestamp_status = CUPTI_ERROR_NOT_INITIALIZED;
  CuptiTracer tracer(api);
  EXPECT_FALSE(tracer.start());
  EXPECT_TRUE(api.enabled.empty());
  ASSERT_FALSE(tracer.errors().empty());
  EXPECT_NE(tracer.errors()[0].find("cuptiGetTimestamp"), std::string::npos);
}

TEST(CuptiCall, LogsTheCallAndCuptisTextOnFailureOnly) {
  std::vector<std::string> lines;
  const CuptiLog log = [&](const std::string& line) { lines.push_back(line); };
  EXPECT_EQ(cupti_call(CUPTI_SUCCESS, "cuptiActivityFlushAll(0)", log), CUPTI_SUCCESS);
  EXPECT_TRUE(lines.empty());
  EXPECT_EQ(cupti_call(CUPTI_ERROR_INVALID_PARAMETER, "cuptiActivityEnable(kind)", log),
            CUPTI_ERROR_INVALID_PARAMETER);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("cuptiActivityEnable(kind)"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("CUPTI_ERROR_INVALID_PARAMETER"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace tunescope::profiler::cupti

#endif  // HAS_CUPTI
