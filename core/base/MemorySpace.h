// Where the bytes of a tensor or buffer live: host memory, or a device's memory that
// the host cannot dereference. Tensors, conv workspaces and saved spectra are allocated
// in the memory space of the backend that runs them, so the engine is the same for the
// CPU and CUDA backends; kernels get raw pointers valid in their backend's space.
//
// Every call here is blocking for the calling thread. Copies that read or write device
// memory are ordered after all work submitted to that device so far (so a host read
// sees what the kernels before it wrote); hot paths use the stream-ordered copies of
// OpKernels (scatter_rows) instead.
#pragma once

#include <cstddef>
#include <string>

namespace tunescope {

class MemorySpace {
 public:
  virtual ~MemorySpace() = default;

  // "host", "cuda:0": the name in error messages.
  virtual std::string name() const = 0;
  // True when the host may dereference pointers of this space.
  virtual bool host_accessible() const = 0;

  // At least 64-byte aligned; throws Error(runtime) naming the size and the space when
  // the memory is not there (the tuner records it as a failed candidate).
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* p, size_t bytes) noexcept = 0;

  virtual void zero(void* p, size_t bytes) = 0;
  // dst and src both in this space.
  virtual void copy_within(void* dst, const void* src, size_t bytes) = 0;
  // Host memory to this space and back.
  virtual void copy_from_host(void* dst, const void* host_src, size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, size_t bytes) = 0;
};

// The process's host memory (64-byte aligned, counted against the allocation cap of
// AllocationCap.h).
MemorySpace& host_memory();

// Copies between any two spaces (through host staging when both are devices).
void copy_between(MemorySpace& dst_space, void* dst, MemorySpace& src_space, const void* src,
                  size_t bytes);

}  // namespace tunescope
