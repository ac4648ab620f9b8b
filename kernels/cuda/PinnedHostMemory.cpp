#include "kernels/cuda/PinnedHostMemory.h"

#include <cstring>

#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"

namespace tunescope::cuda {

PinnedHostMemory& PinnedHostMemory::instance() {
  static PinnedHostMemory space;
  return space;
}

PinnedHostMemory::~PinnedHostMemory() {
  for (auto& [bytes, blocks] : free_)
    for (void* p : blocks) cudaFreeHost(p);
}

void* PinnedHostMemory::allocate(size_t bytes) {
  {
    std::lock_guard lock(mutex_);
    auto it = free_.find(bytes);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      return p;
    }
  }
  void* p = nullptr;
  // Portable: a batch may be uploaded to any device (one replica per device).
  const cudaError_t status = cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable);
  if (status != cudaSuccess) {
    cudaGetLastError();
    fail(ErrorKind::runtime, "cannot allocate ", bytes, " bytes of ", name(),
         " memory: ", error_string(status));
  }
  return p;  // cudaHostAlloc aligns to at least a page
}

void PinnedHostMemory::deallocate(void* p, size_t bytes) noexcept {
  if (!p) return;
  std::lock_guard lock(mutex_);
  try {
    free_[bytes].push_back(p);
  } catch (...) {
    cudaFreeHost(p);  // no room to keep it: give it back
  }
}

size_t PinnedHostMemory::cached_blocks() const {
  std::lock_guard lock(mutex_);
  size_t count = 0;
  for (const auto& [bytes, blocks] : free_) count += blocks.size();
  return count;
}

void PinnedHostMemory::zero(void* p, size_t bytes) { std::memset(p, 0, bytes); }
void PinnedHostMemory::copy_within(void* dst, const void* src, size_t bytes) {
  std::memcpy(dst, src, bytes);
}
void PinnedHostMemory::copy_from_host(void* dst, const void* host_src, size_t bytes) {
  std::memcpy(dst, host_src, bytes);
}
void PinnedHostMemory::copy_to_host(void* host_dst, const void* src, size_t bytes) {
  std::memcpy(host_dst, src, bytes);
}

}  // namespace tunescope::cuda
