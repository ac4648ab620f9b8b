#include "kernels/cuda/CudaMemory.h"

#include <map>
#include <memory>

#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaDevice.h"
#include "kernels/cuda/StreamHandles.h"

namespace tunescope::cuda {

CudaMemory& CudaMemory::of_device(int device) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<CudaMemory>> spaces;
  std::lock_guard lock(mutex);
  auto& space = spaces[device];
  if (!space) space.reset(new CudaMemory(device));
  return *space;
}

std::string CudaMemory::name() const { return cat("cuda:", device_); }

void* CudaMemory::allocate(size_t bytes) {
  const CurrentDevice scope(device_);
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, bytes);
  if (status != cudaSuccess) {
    cudaGetLastError();  // out of memory is not sticky: clear it for the calls after
    fail(ErrorKind::runtime, "cannot allocate ", bytes, " bytes on ", name(), ": ",
         error_string(status));
  }
  return p;
}

void CudaMemory::deallocate(void* p, size_t) noexcept {
  int previous = 0;
  const bool restore = cudaGetDevice(&previous) == cudaSuccess && previous != device_;
  cudaSetDevice(device_);
  cudaFree(p);  // implicitly synchronises: no kernel still uses the memory
  if (restore) cudaSetDevice(previous);
}

void CudaMemory::zero(void* p, size_t bytes) {
  const CurrentDevice scope(device_);
  TS_CUDA_CHECK(cudaMemset(p, 0, bytes));
  TS_CUDA_CHECK(cudaDeviceSynchronize());
}

void CudaMemory::copy_within(void* dst, const void* src, size_t bytes) {
  const CurrentDevice scope(device_);
  TS_CUDA_CHECK(cudaDeviceSynchronize());
  TS_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
  TS_CUDA_CHECK(cudaDeviceSynchronize());
}

void CudaMemory::copy_from_host(void* dst, const void* host_src, size_t bytes) {
  const CurrentDevice scope(device_);
  TS_CUDA_CHECK(cudaDeviceSynchronize());
  TS_CUDA_CHECK(cudaMemcpy(dst, host_src, bytes, cudaMemcpyHostToDevice));
}

void CudaMemory::copy_to_host(void* host_dst, const void* src, size_t bytes) {
  const CurrentDevice scope(device_);
  TS_CUDA_CHECK(cudaDeviceSynchronize());
  TS_CUDA_CHECK(cudaMemcpy(host_dst, src, bytes, cudaMemcpyDeviceToHost));
}

LaneStreams::~LaneStreams() {
  int previous = 0;
  const bool restore = cudaGetDevice(&previous) == cudaSuccess && previous != device_;
  cudaSetDevice(device_);  // release_handles looks the handles up by the current device
  for (cudaStream_t s : streams_) {
    cudaStreamSynchronize(s);
    release_handles(s);
    cudaStreamDestroy(s);
  }
  if (restore) cudaSetDevice(previous);
}

cudaStream_t LaneStreams::stream(int lane) {
  std::lock_guard lock(mutex_);
  const CurrentDevice scope(device_);
  while (static_cast<int>(streams_.size()) <= lane) {
    cudaStream_t s = nullptr;
    TS_CUDA_CHECK_CTX(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                      "creating a lane stream");
    streams_.push_back(s);
  }
  return streams_[static_cast<size_t>(lane)];
}

void LaneStreams::finish(cudaStream_t stream) {
  TS_CUDA_CHECK_CTX(cudaStreamSynchronize(stream), "finishing a lane's kernels");
}

}  // namespace tunescope::cuda
