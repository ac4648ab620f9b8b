// The gradient reduction of replicas that run one per device (DeviceCollectives, NCCL)
// and the placement the cuda backend makes, against a host sum. The reduction runs with
// one device (NCCL with a single rank) and with every device the machine has.
// Tolerance: |got - want| <= 1e-5 * max(1, |want|) per element for float sums of up to
// 8 terms of magnitude <= 1 (the host sums in double).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "CudaTestSupport.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "kernels/cuda/CudaMemory.h"
#include "kernels/cuda/CudaOps.h"
#include "kernels/cuda/DeviceCollectives.h"
#include "kernels/cuda/PinnedHostMemory.h"
#include "tests/kernels/cpu/CpuOpsTestSupport.h"

namespace tunescope::cuda {
namespace {

const Shape4 kShape{2, 3, 17, 19};  // 1938 floats: not a multiple of any chunk size

// The sources of `devices` devices (one each, seeds 1, 2, ...) on the host, and their sum.
std::vector<Tensor> host_sources(int devices) {
  std::vector<Tensor> sources;
  for (int d = 0; d < devices; ++d)
    sources.push_back(cpu::test_support::random_tensor(kShape, Layout::NCHW, 1 + d));
  return sources;
}

void expect_scaled_sum(const Tensor& got_device, const std::vector<Tensor>& sources, double scale) {
  const Tensor got = to_host(got_device);
  for (int64_t k = 0; k < got.size(); ++k) {
    double want = 0;
    for (const Tensor& s : sources) want += static_cast<double>(s.data()[k]);
    want *= scale;
    ASSERT_LE(std::abs(static_cast<double>(got.data()[k]) - want),
              1e-5 * std::max(1.0, std::abs(want)))
        << k;
  }
}

// Runs without a device: says whether this build can reduce over devices, and why not.
TEST(DeviceCollectives, SaysWhetherTheBuildHasNccl) {
#ifdef TUNESCOPE_HAVE_NCCL
  EXPECT_TRUE(DeviceCollectives::unavailable_reason().empty());
#else
  EXPECT_TRUE(contains(DeviceCollectives::unavailable_reason(), "built without NCCL"));
  DeviceCollectives collectives;
  const float* none[] = {nullptr, nullptr};
  const int devices[] = {0, 1};
  try {
    collectives.reduce_sum(none, devices, 0, nullptr, 0, nullptr);
    ADD_FAILURE() << "reduced without NCCL";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_TRUE(contains(e.what(), "devices 0,1: tunescope was built without NCCL")) << e.what();
  }
#endif
}

#ifdef TUNESCOPE_HAVE_NCCL
// NCCL over `count` devices 0..count-1 into a tensor of device 0 that is not a source.
void expect_reduction_over(int count) {
  const std::vector<Tensor> host = host_sources(count);
  std::vector<Tensor> device;
  std::vector<const float*> data;
  std::vector<int> devices;
  for (int d = 0; d < count; ++d) {
    device.push_back(to_memory(host[static_cast<size_t>(d)], CudaMemory::of_device(d)));
    data.push_back(device.back().data());
    devices.push_back(d);
  }
  Tensor out(kShape, Layout::NCHW, CudaMemory::of_device(0));
  LaneStreams streams(0);
  DeviceCollectives collectives;
  for (int repeat = 0; repeat < 2; ++repeat) {  // the second call reuses the communicators
    collectives.reduce_sum(data, devices, 0, out.data(), out.size(), streams.stream(0));
    LaneStreams::finish(streams.stream(0));
    expect_scaled_sum(out, host, 1.0);
  }
}

TEST(DeviceCollectives, NcclReduceOverOneDeviceEqualsItsSource) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  expect_reduction_over(1);
}

TEST(DeviceCollectives, NcclReduceOverEveryDeviceEqualsTheHostSum) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  expect_reduction_over(require_cuda_devices());
}

// The op the engine calls: sources on every device, out = source 0 (in place), scaled.
TEST(DeviceCollectives, AllreduceOpAcrossDevicesScalesTheSum) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  const int count = require_cuda_devices();
  if (count < 2) GTEST_SKIP() << "needs 2 CUDA devices to reduce across devices, found " << count;
  const std::vector<Tensor> host = host_sources(count);
  std::vector<Tensor> device;
  for (int d = 0; d < count; ++d)
    device.push_back(to_memory(host[static_cast<size_t>(d)], CudaMemory::of_device(d)));
  std::vector<const Tensor*> sources;
  for (const Tensor& t : device) sources.push_back(&t);
  DeviceCollectives collectives;
  CudaOps ops(&collectives);
  ThreadPool pool(1);
  LaneStreams streams(0);
  const ExecContext ctx{pool, nullptr, 0, 0, NativeStream(streams.stream(0))};
  ops.allreduce_sum(ctx, sources, 1.0f / static_cast<float>(count), device[0]);
  LaneStreams::finish(streams.stream(0));
  expect_scaled_sum(device[0], host, 1.0 / count);
  for (int d = 1; d < count; ++d)  // the other sources are left alone
    EXPECT_TRUE(cpu::test_support::bitwise_equal(to_host(device[static_cast<size_t>(d)]),
                                                 host[static_cast<size_t>(d)]));

  // And the weight broadcast from device 0 to the others (a peer copy).
  std::vector<Tensor*> targets;
  for (int d = 1; d < count; ++d) targets.push_back(&device[static_cast<size_t>(d)]);
  ops.broadcast(ctx, device[0], targets);
  LaneStreams::finish(streams.stream(0));
  for (Tensor* t : targets)
    EXPECT_TRUE(cpu::test_support::bitwise_equal(to_host(*t), to_host(device[0])));
}
#endif

// The backend's placement: one replica per device where there are several devices,
// everything on device 0 with one, and a usage error for more replicas than devices.
TEST(CudaBackendReplicas, PlacesReplicasByDeviceCount) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  const int count = require_cuda_devices();
  const std::unique_ptr<Backend> backend = Registry::instance().make_backend("cuda");
  EXPECT_EQ(backend->replica_devices(1), std::vector<int>({0}));
  if (count == 1) {
    EXPECT_EQ(backend->replica_devices(3), std::vector<int>({0, 0, 0}));
    return;
  }
  EXPECT_EQ(backend->replica_devices(2), std::vector<int>({0, 1}));
  EXPECT_EQ(backend->device_memory(1).name(), "cuda:1");
  try {
    backend->replica_devices(count + 1);
    ADD_FAILURE() << "placed " << count + 1 << " replicas on " << count << " devices";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_TRUE(contains(e.what(), "replicas <= " + std::to_string(count))) << e.what();
  }
}

// Pinned staging blocks are kept and handed out again, so a loader allocating one batch
// per step reaches cudaHostAlloc only for the first few.
TEST(PinnedHostMemory, ReusesAFreedBlockOfTheSameSize) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  PinnedHostMemory& pinned = PinnedHostMemory::instance();
  EXPECT_TRUE(pinned.host_accessible());
  void* first = pinned.allocate(4096);
  pinned.zero(first, 4096);
  EXPECT_EQ(static_cast<unsigned char*>(first)[4095], 0);
  const size_t cached = pinned.cached_blocks();
  pinned.deallocate(first, 4096);
  EXPECT_EQ(pinned.cached_blocks(), cached + 1);
  void* second = pinned.allocate(4096);
  EXPECT_EQ(second, first);
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, second), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);  // page-locked, not pageable
  pinned.deallocate(second, 4096);
}

}  // namespace
}  // namespace tunescope::cuda
