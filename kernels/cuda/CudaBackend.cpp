// The "cuda" backend: the op kernels of CudaOps on device 0, tensors in that device's
// memory (CudaMemory), one non-blocking cudaStream_t per executor lane (LaneStreams),
// and the device's description. Conv layers default to cuDNN's implicit GEMM, the one
// cuDNN algorithm that runs every problem in both layouts (the backend has no direct).
// Without a usable device the factory throws Error(usage) "no CUDA device: <driver's
// message>" (CLI exit 2), so `--backend auto` (core/base/BackendChoice) falls back to cpu.
// Multi-GPU replicas (NCCL) are not part of it yet: every replica runs on device 0.
#include <cstdint>
#include <memory>

#include "core/base/Backend.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaDevice.h"
#include "kernels/cuda/CudaMemory.h"
#include "kernels/cuda/CudaOps.h"

namespace tunescope::cuda {
namespace {

constexpr int kDevice = 0;

class CudaBackend final : public Backend {
 public:
  CudaBackend() : description_(describe_cuda_device(query_cuda_device(kDevice), query_library_versions())) {}

  std::string name() const override { return "cuda"; }
  std::string device_description() const override { return description_; }
  OpKernels& ops() override { return ops_; }
  MemorySpace& memory() override { return CudaMemory::of_device(kDevice); }
  void* lane_stream(int lane) override { return streams_.stream(lane); }
  void finish_stream(void* stream) override { LaneStreams::finish(static_cast<cudaStream_t>(stream)); }

 private:
  std::string description_;
  CudaOps ops_;
  LaneStreams streams_{kDevice};
};

std::unique_ptr<Backend> make_cuda_backend() {
  require_cuda_devices();
  TS_CUDA_CHECK_CTX(cudaSetDevice(kDevice), "selecting the cuda backend's device");
  // The ops' per-call scratch (cudaMallocAsync) comes from the device's default pool;
  // keeping freed memory in the pool across synchronisations (instead of the default
  // of returning it at each one) makes those allocations free after the first step.
  cudaMemPool_t pool = nullptr;
  TS_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, kDevice));
  uint64_t keep_all = UINT64_MAX;
  TS_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
  return std::make_unique<CudaBackend>();
}

const BackendRegistration registration("cuda", "cudnn:implicit_gemm", make_cuda_backend);

}  // namespace
}  // namespace tunescope::cuda
