// Page-locked host memory (cudaHostAlloc) as a host-accessible MemorySpace: the staging
// memory of the cuda backend, where the data loader assembles batches so that their
// upload (scatter_rows, cudaMemcpyAsync on the lane's stream) is a DMA that returns at
// once and overlaps the device's work, instead of a copy from pageable memory that the
// driver stages synchronously.
//
// cudaHostAlloc and cudaFreeHost are slow and cudaFreeHost synchronises the device, and
// the loader allocates a batch of the same size every step, so freed blocks are kept by
// size and handed out again: after the first few batches no call reaches the driver.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/base/MemorySpace.h"

namespace tunescope::cuda {

class PinnedHostMemory final : public MemorySpace {
 public:
  // The process's one pinned space (blocks are portable: usable with every device).
  static PinnedHostMemory& instance();
  ~PinnedHostMemory() override;

  std::string name() const override { return "pinned host"; }
  bool host_accessible() const override { return true; }
  void* allocate(size_t bytes) override;
  void deallocate(void* p, size_t bytes) noexcept override;
  void zero(void* p, size_t bytes) override;
  void copy_within(void* dst, const void* src, size_t bytes) override;
  void copy_from_host(void* dst, const void* host_src, size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, size_t bytes) override;

  // Blocks kept for reuse (for tests: a freed block is reused, not returned).
  size_t cached_blocks() const;

 private:
  PinnedHostMemory() = default;
  mutable std::mutex mutex_;
  std::map<size_t, std::vector<void*>> free_;  // by size in bytes
};

}  // namespace tunescope::cuda
