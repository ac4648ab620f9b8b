// The CUPTI device tracer inside the host Tracer, against a fake CUPTI (no GPU): host
// ranges pushed as external correlation ids and mapped back onto kernels, copies, memsets,
// synchronisations and API calls delivered in buffers out of order; GPU timestamps on
// the host clock; dropped records in the trace metadata and the report; two streams of
// overlapping kernels giving exact lane busy time, concurrency and device time by layer.
#ifdef HAS_CUPTI

#include "profiler/cupti/CuptiDeviceTracer.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "FakeCuptiApi.h"
#include "profiler/Clock.h"
#include "profiler/Metrics.h"
#include "profiler/MetricsReport.h"
#include "profiler/Tracer.h"

namespace tunescope::profiler::cupti {
namespace {

using test_support::external_correlation_record;
using test_support::FakeCuptiApi;
using test_support::kernel_record;
using test_support::memcpy_record;
using test_support::memset_record;
using test_support::runtime_record;
using test_support::synchronization_record;

constexpr CUpti_CallbackId kLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;

const Activity& find(const Trace& trace, ActivityKind kind, uint64_t correlation) {
  const auto it = std::find_if(
      trace.activities.begin(), trace.activities.end(),
      [&](const Activity& a) { return a.kind == kind && a.correlation == correlation; });
  if (it == trace.activities.end())
    throw std::runtime_error("no activity with correlation " + std::to_string(correlation));
  return *it;
}

// One traced step as CUPTI would report it: layer conv1 runs a cuDNN op range that
// launches kernel A on stream 7 (correlation 11) and copies on stream 13 (13); layer
// conv2 launches kernel B on stream 13 (12), overlapping A by 500 ns, and a memset on
// stream 7 (14), then synchronises stream 7 (15). A kernel tagged by another tool's
// correlation kind (16) and one launched outside every range (17) stay unattributed.
class CuptiDeviceTracerTest : public ::testing::Test {
 protected:
  void run_step() {
    api_->names[{CUPTI_CB_DOMAIN_RUNTIME_API, kLaunch}] = "cudaLaunchKernel_v7000";
    api_->dropped_per_buffer = 2;
    tracer_.attach_device_tracer(std::make_unique<CuptiDeviceTracer>(api_));
    host_before_ = now_ns();
    tracer_.start();
    host_after_ = now_ns();
    {
      RangeScope conv1(&tracer_, "conv1", RangeCategory::layer, 0, 0);
      RangeScope op(&tracer_, "cudnn:gemm.forward", RangeCategory::phase, 0, 0);
    }
    { RangeScope conv2(&tracer_, "conv2", RangeCategory::layer, 0, 0); }
    ASSERT_EQ(api_->pushed.size(), 3u);
    EXPECT_TRUE(api_->correlation_stack.empty()) << "every pushed id popped";
    const uint64_t conv1 = api_->pushed[0], op = api_->pushed[1], conv2 = api_->pushed[2];
    const uint64_t t0 = api_->gpu_now;

    // Kernels arrive in a buffer before the API calls that launched them.
    api_->deliver([&](test_support::BufferWriter& b) {
      b.add(kernel_record("_Z7kernelAv", t0 + 200, t0 + 1'200, 0, 7, 11));
      b.add(kernel_record("_Z7kernelBv", t0 + 700, t0 + 1'700, 0, 13, 12));
      b.add(memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096, t0 + 10, t0 + 60, 0, 13, 13));
      b.add(memset_record(256, t0 + 2'000, t0 + 2'100, 0, 7, 14));
      b.add(synchronization_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
                                   t0 + 2'100, t0 + 2'300, 1, 7, 15));
      b.add(kernel_record("_Z6foreignv", t0 + 3'000, t0 + 3'010, 0, 7, 16));
      b.add(kernel_record("_Z8untaggedv", t0 + 4'000, t0 + 4'010, 0, 7, 17));
    });
    api_->deliver([&](test_support::BufferWriter& b) {
      b.add(external_correlation_record(conv1, 13));
      b.add(runtime_record(kLaunch, t0 + 5, t0 + 9, 77, 13));
      b.add(external_correlation_record(op, 11));
      b.add(runtime_record(kLaunch, t0 + 100, t0 + 150, 77, 11));
      b.add(external_correlation_record(conv2, 12));
      b.add(runtime_record(kLaunch, t0 + 600, t0 + 650, 77, 12));
      b.add(external_correlation_record(conv2, 14));
      b.add(external_correlation_record(conv2, 15));
      b.add(external_correlation_record(conv2, 16, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1));
    });
    tracer_.stop();
    trace_ = tracer_.collect({"test GPU", "cuda", "", {}});
    ids_ = {conv1, op, conv2};
  }

  std::shared_ptr<FakeCuptiApi> api_ = std::make_shared<FakeCuptiApi>();
  Tracer tracer_;
  Trace trace_;
  int64_t host_before_ = 0, host_after_ = 0;
  std::vector<uint64_t> ids_;
};

TEST_F(CuptiDeviceTracerTest, EveryRecordKindIsConvertedSortedAndOnTheHostClock) {
  run_step();
  EXPECT_EQ(trace_.activities.size(), 10u);  // 4 kernels, memcpy, memset, sync, 3 launches
  EXPECT_TRUE(
      std::is_sorted(trace_.activities.begin(), trace_.activities.end(),
                     [](const Activity& a, const Activity& b) { return a.start_ns < b.start_ns; }));
  const Activity& a = find(trace_, ActivityKind::kernel, 11);
  const Activity& launch = find(trace_, ActivityKind::overhead, 11);
  EXPECT_EQ(a.name, "kernelA()");
  EXPECT_EQ(a.stream, 7);
  EXPECT_EQ(launch.name, "cudaLaunchKernel");
  EXPECT_EQ(launch.device, -1);
  // GPU time t0 is the host time of start(); differences are kept to the nanosecond.
  const int64_t host_t0 = launch.start_ns - 100;
  EXPECT_GE(host_t0, host_before_);
  EXPECT_LE(host_t0, host_after_);
  EXPECT_EQ(a.start_ns - host_t0, 200);
  EXPECT_EQ(a.duration_ns(), 1'000);
  EXPECT_EQ(find(trace_, ActivityKind::memcpy, 13).name, "Memcpy HtoD");
  EXPECT_EQ(find(trace_, ActivityKind::memcpy, 13).bytes, 4096);
  EXPECT_EQ(find(trace_, ActivityKind::memset, 14).start_ns - host_t0, 2'000);
  EXPECT_EQ(find(trace_, ActivityKind::sync, 15).name, "Synchronize stream");
}

TEST_F(CuptiDeviceTracerTest, ExternalCorrelationMapsDeviceWorkAndLaunchesToTheirHostRanges) {
  run_step();
  ASSERT_EQ(trace_.ranges.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(trace_.ranges[i].id, ids_[i]) << trace_.ranges[i].name;
  const uint64_t conv1 = ids_[0], op = ids_[1], conv2 = ids_[2];
  EXPECT_EQ(find(trace_, ActivityKind::kernel, 11).range_id, op);
  EXPECT_EQ(find(trace_, ActivityKind::overhead, 11).range_id, op);
  EXPECT_EQ(find(trace_, ActivityKind::kernel, 12).range_id, conv2);
  EXPECT_EQ(find(trace_, ActivityKind::memcpy, 13).range_id, conv1);
  EXPECT_EQ(find(trace_, ActivityKind::memset, 14).range_id, conv2);
  EXPECT_EQ(find(trace_, ActivityKind::sync, 15).range_id, conv2);
  EXPECT_EQ(find(trace_, ActivityKind::kernel, 16).range_id, 0u)
      << "another tool's correlation kind";
  EXPECT_EQ(find(trace_, ActivityKind::kernel, 17).range_id, 0u);
  EXPECT_EQ(trace_.metadata.extra.at("cupti.attributed_records"), "8");
}

TEST_F(CuptiDeviceTracerTest, DroppedRecordsReachTheMetadataAndTheReport) {
  run_step();
  EXPECT_EQ(trace_.metadata.extra.at(kDeviceTracerKey), "cupti");
  EXPECT_EQ(trace_.metadata.extra.at(kDroppedRecordsKey), "4");
  EXPECT_EQ(trace_.metadata.extra.at("cupti.dropped_records"), "4");
  const std::string report = format_summary(summarize(trace_));
  EXPECT_NE(report.find("device tracer: cupti, 4 records dropped"), std::string::npos) << report;
  // Kernels, the copy and the memset: what the device ran.
  EXPECT_NE(report.find("\ndevice activities:"), std::string::npos) << report;
}

TEST_F(CuptiDeviceTracerTest, StreamsAreLanesAndOverlappingKernelsGiveExactConcurrency) {
  run_step();
  // Work kinds only: kernels, the memcpy and the memset (the sync and launches are not work).
  // Busy: [10,60) + [200,1700) + [2000,2100) + the two 10 ns kernels = 1670 ns; two in
  // flight during [700,1200): 500 ns.
  const Concurrency c = concurrency(trace_);
  EXPECT_EQ(c.busy_ns, 1'670);
  EXPECT_EQ(c.concurrent_ns, 500);
  EXPECT_DOUBLE_EQ(c.concurrent_share, 500.0 / 1'670.0);
  EXPECT_DOUBLE_EQ(c.mean_in_flight, (50.0 + 2 * 1'000.0 + 100.0 + 20.0) / 1'670.0);
  EXPECT_EQ(c.max_in_flight, 2);

  const std::vector<LaneStats> lanes = lane_stats(trace_);
  ASSERT_EQ(lanes.size(), 2u);
  EXPECT_EQ(lanes[0].lane, (LaneKey{0, 7}));
  EXPECT_EQ(lanes[0].busy_ns, 1'000 + 100 + 20);
  EXPECT_EQ(lanes[1].lane, (LaneKey{0, 13}));
  EXPECT_EQ(lanes[1].busy_ns, 50 + 1'000);
}

TEST_F(CuptiDeviceTracerTest, DeviceTimeIsAttributedToLayersThroughNestedOpRanges) {
  run_step();
  const std::vector<RangeDeviceTime> rows = device_time_by_range(trace_, RangeCategory::layer);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "conv2");  // kernel B 1000 + memset 100
  EXPECT_EQ(rows[0].device_ns, 1'100);
  EXPECT_EQ(rows[0].activities, 2u);
  EXPECT_EQ(rows[0].ranges, 1u);
  EXPECT_EQ(rows[1].name, "conv1");  // kernel A through its op range 1000 + memcpy 50
  EXPECT_EQ(rows[1].device_ns, 1'050);
  EXPECT_DOUBLE_EQ(rows[0].share_pct + rows[1].share_pct, 100.0);
  const std::string report = format_summary(summarize(trace_));
  EXPECT_NE(report.find("device time by layer"), std::string::npos) << report;
}

TEST(CuptiDeviceTracer, RefusedStartPushesNothingAndTheTraceSaysWhy) {
  auto api = std::make_shared<FakeCuptiApi>();
  api->timestamp_status = CUPTI_ERROR_NOT_INITIALIZED;
  Tracer tracer;
  tracer.attach_device_tracer(std::make_unique<CuptiDeviceTracer>(api));
  tracer.start();
  { RangeScope layer(&tracer, "conv1", RangeCategory::layer); }
  tracer.stop();
  EXPECT_TRUE(api->pushed.empty());
  const Trace trace = tracer.collect({});
  EXPECT_EQ(trace.ranges.size(), 1u);
  ASSERT_EQ(trace.metadata.extra.count(kDeviceTracerErrorKey), 1u);
  EXPECT_NE(trace.metadata.extra.at(kDeviceTracerErrorKey).find("cuptiGetTimestamp"),
            std::string::npos);
  const std::string report = format_summary(summarize(trace));
  EXPECT_NE(report.find("device tracer cupti did not start"), std::string::npos) << report;
}

TEST(CuptiDeviceTracer, EnablesExternalCorrelationRecords) {
  const auto kinds = CuptiTracerOptions{}.kinds();
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION),
            kinds.end());
}

}  // namespace
}  // namespace tunescope::profiler::cupti

#endif  // HAS_CUPTI
