// The CUPTI tracer against the real CUPTI: on a device it records a launched kernel and
// its cudaLaunchKernel with one correlation id, inside the host-clock window of the
// launch; without one, start() fails cleanly with CUPTI's reasons and never aborts.
#include "profiler/cupti/CuptiTracer.h"

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>

#include "CudaTestSupport.h"
#include "TraceProbeKernels.h"
#include "kernels/cuda/CudaCheck.h"
#include "profiler/Clock.h"

namespace tunescope::profiler::cupti {
namespace {

TEST(CuptiRealApi, WithoutADeviceStartFailsCleanlyOrRecordsNothing) {
  const std::string reason = cuda::cuda_unavailable_reason();
  if (reason.empty())
    GTEST_SKIP() << "a CUDA device is present (covered by RecordsALaunchedKernel)";
  std::vector<std::string> log;
  auto api = make_cupti_api([&](const std::string& line) { log.push_back(line); });
  CuptiTracer tracer(*api);
  if (tracer.start()) {
    // Some CUPTI versions accept the setup without a driver; then nothing can run.
    tracer.stop();
  } else {
    std::printf("CUPTI without a device: %s\n", tracer.errors().front().c_str());
    EXPECT_FALSE(tracer.errors().empty());
    EXPECT_FALSE(log.empty()) << "every failed CUPTI call is logged";
  }
  Trace trace;
  tracer.collect_into(trace);
  EXPECT_TRUE(trace.activities.empty());
}

TEST(CuptiRealApi, RecordsALaunchedKernelOnTheHostClock) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  auto api = make_cupti_api();
  CuptiTracer tracer(*api);
  // Create the context first so its setup does not land in the window.
  TS_CUDA_CHECK(cudaFree(nullptr));
  ASSERT_TRUE(tracer.start()) << (tracer.errors().empty() ? "" : tracer.errors().front());

  constexpr int n = 1 << 20;
  float* data = nullptr;
  TS_CUDA_CHECK(cudaMalloc(&data, n * sizeof(float)));
  TS_CUDA_CHECK(cudaMemset(data, 0, n * sizeof(float)));
  const int64_t host_before = now_ns();
  TS_CUDA_CHECK(cuda::test_support::launch_add_one(data, n, nullptr));
  TS_CUDA_CHECK(cudaDeviceSynchronize());
  const int64_t host_after = now_ns();
  TS_CUDA_CHECK(cudaFree(data));
  tracer.stop();

  Trace trace;
  tracer.collect_into(trace);
  EXPECT_TRUE(tracer.errors().empty()) << tracer.errors().front();
  const auto kernel =
      std::find_if(trace.activities.begin(), trace.activities.end(), [](const Activity& a) {
        return a.kind == ActivityKind::kernel && a.name.str().find("add_one") != std::string::npos;
      });
  ASSERT_NE(kernel, trace.activities.end())
      << trace.activities.size() << " activities, none add_one";
  // Normalised GPU time falls inside the host window (allowing the offset's sampling error).
  constexpr int64_t kSlackNs = 50'000;
  EXPECT_GE(kernel->start_ns, host_before - kSlackNs);
  EXPECT_LE(kernel->end_ns, host_after + kSlackNs);
  EXPECT_GT(kernel->duration_ns(), 0);
  EXPECT_NE(kernel->correlation, 0u);

  const auto launch =
      std::find_if(trace.activities.begin(), trace.activities.end(), [&](const Activity& a) {
        return a.kind == ActivityKind::overhead && a.correlation == kernel->correlation;
      });
  ASSERT_NE(launch, trace.activities.end()) << "no API record with the kernel's correlation id";
  EXPECT_EQ(launch->device, -1);
  EXPECT_NE(launch->name.str().find("LaunchKernel"), std::string::npos) << launch->name;
  EXPECT_LE(launch->start_ns, kernel->start_ns);

  const bool memset_seen =
      std::any_of(trace.activities.begin(), trace.activities.end(),
                  [](const Activity& a) { return a.kind == ActivityKind::memset; });
  EXPECT_TRUE(memset_seen);
  std::printf("CUPTI: %zu activities, %s dropped, kernel %s %lld ns\n", trace.activities.size(),
              trace.metadata.extra["cupti.dropped_records"].c_str(), kernel->name.c_str(),
              static_cast<long long>(kernel->duration_ns()));
}

}  // namespace
}  // namespace tunescope::profiler::cupti
