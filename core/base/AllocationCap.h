// A process-wide cap on the host memory held in host AlignedBuffers (tensors, conv
// workspaces), so that a candidate running out of memory fails with a clear
// Error(runtime) instead of exhausting the machine, and so that this is testable.
#pragma once

#include <cstddef>

namespace tunescope {

// Bytes held in AlignedBuffers now (as the allocator sized them).
size_t allocated_bytes();
// 0: no cap. An AlignedBuffer that would take the held bytes past the cap throws.
size_t allocation_cap();
void set_allocation_cap(size_t bytes);

// Caps what is allocated while it lives to `bytes` on top of what is held at its
// creation (0: no cap), restoring the previous cap afterwards.
class ScopedAllocationCap {
 public:
  explicit ScopedAllocationCap(size_t bytes) : previous_(allocation_cap()) {
    if (bytes > 0) set_allocation_cap(allocated_bytes() + bytes);
  }
  ~ScopedAllocationCap() { set_allocation_cap(previous_); }
  ScopedAllocationCap(const ScopedAllocationCap&) = delete;
  ScopedAllocationCap& operator=(const ScopedAllocationCap&) = delete;

 private:
  size_t previous_;
};

}  // namespace tunescope
