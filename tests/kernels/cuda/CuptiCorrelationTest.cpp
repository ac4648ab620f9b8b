// The CUPTI device tracer inside the host Tracer on a real GPU: kernels launched inside
// two host ranges on two streams carry those ranges' ids (CUPTI external correlation),
// sit on one lane per stream in the metrics, and fall inside their host-clock window.
// Skips without a device; the same logic runs on fake records in
// tests/profiler/cupti/CuptiDeviceTracerTest.cpp.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>

#include "CudaTestSupport.h"
#include "TraceProbeKernels.h"
#include "kernels/cuda/CudaCheck.h"
#include "profiler/Clock.h"
#include "profiler/Metrics.h"
#include "profiler/Tracer.h"
#include "profiler/cupti/CuptiDeviceTracer.h"

namespace tunescope::profiler::cupti {
namespace {

TEST(CuptiCorrelationRealApi, KernelsCarryTheIdsOfTheRangesTheyWereLaunchedIn) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  TS_CUDA_CHECK(cudaFree(nullptr));  // the context outside the traced window
  constexpr int n = 1 << 20;
  float* data = nullptr;
  cudaStream_t streams[2] = {};
  TS_CUDA_CHECK(cudaMalloc(&data, 2 * n * sizeof(float)));
  for (cudaStream_t& s : streams)
    TS_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  Tracer tracer;
  tracer.attach_device_tracer(make_cupti_device_tracer());
  const int64_t host_before = now_ns();
  tracer.start();
  {
    RangeScope conv1(&tracer, "conv1", RangeCategory::layer, 0, 0);
    TS_CUDA_CHECK(cuda::test_support::launch_add_one(data, n, streams[0]));
  }
  {
    RangeScope conv2(&tracer, "conv2", RangeCategory::layer, 0, 1);
    TS_CUDA_CHECK(cuda::test_support::launch_add_one(data + n, n, streams[1]));
  }
  TS_CUDA_CHECK(cudaDeviceSynchronize());
  tracer.stop();
  const int64_t host_after = now_ns();
  const Trace trace = tracer.collect({});
  for (cudaStream_t s : streams) TS_CUDA_CHECK(cudaStreamDestroy(s));
  TS_CUDA_CHECK(cudaFree(data));

  ASSERT_EQ(trace.metadata.extra.count(kDeviceTracerErrorKey), 0u)
      << trace.metadata.extra.at(kDeviceTracerErrorKey);
  ASSERT_EQ(trace.ranges.size(), 2u);
  std::vector<const Activity*> kernels;
  for (const Activity& a : trace.activities)
    if (a.kind == ActivityKind::kernel && a.name.str().find("add_one") != std::string::npos)
      kernels.push_back(&a);
  ASSERT_EQ(kernels.size(), 2u) << trace.activities.size() << " activities";
  std::sort(kernels.begin(), kernels.end(),
            [&](const Activity* a, const Activity* b) { return a->range_id < b->range_id; });
  EXPECT_EQ(kernels[0]->range_id, trace.ranges[0].id);
  EXPECT_EQ(kernels[1]->range_id, trace.ranges[1].id);
  EXPECT_NE(kernels[0]->stream, kernels[1]->stream);
  for (const Activity* k : kernels) {
    EXPECT_GE(k->start_ns, host_before);
    EXPECT_LE(k->end_ns, host_after);
  }
  EXPECT_EQ(lane_stats(trace).size(), 2u);
  const auto by_layer = device_time_by_range(trace, RangeCategory::layer);
  ASSERT_EQ(by_layer.size(), 2u);
  std::printf("CUPTI correlation: %s %lld ns, %s %lld ns, dropped %s\n", by_layer[0].name.c_str(),
              static_cast<long long>(by_layer[0].device_ns), by_layer[1].name.c_str(),
              static_cast<long long>(by_layer[1].device_ns),
              trace.metadata.extra.at(kDroppedRecordsKey).c_str());
}

}  // namespace
}  // namespace tunescope::profiler::cupti
