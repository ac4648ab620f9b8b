// Device memory of one CUDA device as a MemorySpace, and the lane streams of the CUDA
// backend.
//
// Allocation is plain cudaMalloc/cudaFree: the engine allocates every tensor, workspace
// and saved spectrum once when a network is built and nothing per step, so a caching
// allocator would only add code. The blocking copies order themselves after all work on
// the device (cudaDeviceSynchronize), as MemorySpace promises; the per-step traffic goes
// through the stream-ordered scatter of the backend's ops instead.
#pragma once

#include <cuda_runtime_api.h>

#include <mutex>
#include <string>
#include <vector>

#include "core/base/MemorySpace.h"

namespace tunescope::cuda {

class CudaMemory final : public MemorySpace {
 public:
  // The memory of `device`; the space makes it current before each call.
  static CudaMemory& of_device(int device);

  int device() const { return device_; }
  std::string name() const override;
  bool host_accessible() const override { return false; }
  void* allocate(size_t bytes) override;
  void deallocate(void* p, size_t bytes) noexcept override;
  void zero(void* p, size_t bytes) override;
  void copy_within(void* dst, const void* src, size_t bytes) override;
  void copy_from_host(void* dst, const void* host_src, size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, size_t bytes) override;

 private:
  explicit CudaMemory(int device) : device_(device) {}
  int device_;
};

// One non-blocking cudaStream_t per executor lane of one device, created on first use
// and destroyed with the set (after the work on them has finished).
class LaneStreams {
 public:
  explicit LaneStreams(int device) : device_(device) {}
  ~LaneStreams();
  LaneStreams(const LaneStreams&) = delete;
  LaneStreams& operator=(const LaneStreams&) = delete;

  cudaStream_t stream(int lane);
  // Blocks until the work enqueued on `stream` has finished; rethrows a kernel's
  // asynchronous error as a tunescope::Error.
  static void finish(cudaStream_t stream);

 private:
  int device_;
  std::mutex mutex_;
  std::vector<cudaStream_t> streams_;
};

}  // namespace tunescope::cuda
