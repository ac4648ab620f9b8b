// The "cuda" backend: the op kernels of CudaOps, tensors in device memory (CudaMemory),
// one non-blocking cudaStream_t per executor lane on its replica's device (LaneStreams),
// batches staged in pinned host memory (PinnedHostMemory), and the description of device
// 0. The update on the host (update_on = host) runs the cpu backend's SGD, found by name
// in the registry, on the host copies of the weights. Conv layers default to cuDNN's
// implicit GEMM, the one cuDNN algorithm that runs every problem in both layouts (the
// backend has no direct).
//
// Replicas (the batch split): with one visible device they all run on device 0 and their
// gradients are summed by one kernel there; with several, replica r runs on device r
// (core/base/ReplicaPlacement.h), with its own memory and lane streams, and the gradients
// are reduced with NCCL (DeviceCollectives). More replicas than devices, or replicas on
// several devices in a build without NCCL, are refused with a usage error saying so.
// Without a usable device the factory throws Error(usage) "no CUDA device: <driver's
// message>" (CLI exit 2), so `--backend auto` (core/base/BackendChoice) falls back to cpu.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "core/base/Backend.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/base/ReplicaPlacement.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaDevice.h"
#include "kernels/cuda/CudaMemory.h"
#include "kernels/cuda/CudaOps.h"
#include "kernels/cuda/DeviceCollectives.h"
#include "kernels/cuda/NcclRankReducer.h"
#include "kernels/cuda/PinnedHostMemory.h"

namespace tunescope::cuda {
namespace {

// The ops' per-call scratch (cudaMallocAsync) comes from the device's default pool;
// keeping freed memory in the pool across synchronisations (instead of the default of
// returning it at each one) makes those allocations free after the first step.
void keep_pool_memory(int device) {
  cudaMemPool_t pool = nullptr;
  TS_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t keep_all = UINT64_MAX;
  TS_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
}

// Direct copies between the replicas' devices for the weight broadcast, where the
// hardware allows (otherwise the driver stages them through the host).
void enable_peer_access(const std::set<int>& devices) {
  for (int from : devices)
    for (int to : devices) {
      if (from == to) continue;
      int can = 0;
      TS_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
      if (!can) continue;
      const CurrentDevice scope(from);
      const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
      if (status == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError();  // an earlier backend did
      else
        TS_CUDA_CHECK_CTX(status, cat("enabling peer access from cuda:", from, " to cuda:", to));
    }
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device_count)
      : device_count_(device_count),
        description_(describe_cuda_device(query_cuda_device(0), query_library_versions())) {}

  std::string name() const override { return "cuda"; }
  std::string device_description() const override { return description_; }
  OpKernels& ops() override { return ops_; }
  OpKernels& host_ops() override {
    std::lock_guard lock(mutex_);
    if (!host_)
      host_ = Registry::instance().make_backend(
          "cpu");  // made for the first run that updates on the host
    return host_->ops();
  }
  MemorySpace& memory() override { return CudaMemory::of_device(0); }
  MemorySpace& device_memory(int device) override { return CudaMemory::of_device(device); }
  MemorySpace& staging_memory() override { return PinnedHostMemory::instance(); }

  std::vector<int> replica_devices(int replicas) override {
    const std::string missing = DeviceCollectives::unavailable_reason();
    std::vector<int> devices =
        place_replicas({"cuda", replicas, device_count_, missing.empty(), missing});
    const std::set<int> used(devices.begin(), devices.end());
    std::lock_guard lock(mutex_);
    for (int d : used)
      if (prepared_.insert(d).second && d != 0) keep_pool_memory(d);
    if (used.size() > 1) enable_peer_access(used);
    return devices;
  }

  NativeStream lane_stream(int lane, int device) override {
    std::lock_guard lock(mutex_);
    auto& streams = streams_[device];
    if (!streams) streams = std::make_unique<LaneStreams>(device);
    return NativeStream(streams->stream(lane));
  }
  std::unique_ptr<RankReducer> make_rank_reducer(Communicator& communicator, int device) override {
    return make_nccl_rank_reducer(communicator, device);
  }
  void bind_thread(int device) override {
    TS_CUDA_CHECK_CTX(cudaSetDevice(device), cat("binding a lane thread to cuda:", device));
  }
  void finish_stream(NativeStream stream) override {
    LaneStreams::finish(stream.as<CUstream_st>());
  }

 private:
  int device_count_;
  std::string description_;
  DeviceCollectives collectives_;
  CudaOps ops_{&collectives_};
  std::mutex mutex_;
  std::set<int> prepared_{0};
  std::map<int, std::unique_ptr<LaneStreams>> streams_;  // by device: lanes of its replicas
  std::unique_ptr<Backend> host_;                        // the cpu backend: host_ops()
};

std::unique_ptr<Backend> make_cuda_backend() {
  const int devices = require_cuda_devices();
  TS_CUDA_CHECK_CTX(cudaSetDevice(0), "selecting the cuda backend's device");
  keep_pool_memory(0);
  return std::make_unique<CudaBackend>(devices);
}

const BackendRegistration registration("cuda", "cudnn:implicit_gemm", make_cuda_backend);

}  // namespace
}  // namespace tunescope::cuda
