// A memory space the engine must treat as a device's: host memory underneath (so CPU
// kernels can still run on it), but host_accessible() is false and every copy in or out
// is counted. Tests run the engine on it to show that tensors are allocated in the
// backend's space and that the host reads them only through copies.
#pragma once

#include <atomic>
#include <string>

#include "core/base/MemorySpace.h"

namespace tunescope::test_support {

class SeparateMemory final : public MemorySpace {
 public:
  std::string name() const override { return "separate:0"; }
  bool host_accessible() const override { return false; }
  void* allocate(size_t bytes) override {
    ++allocations;
    return host_memory().allocate(bytes);
  }
  void deallocate(void* p, size_t bytes) noexcept override { host_memory().deallocate(p, bytes); }
  void zero(void* p, size_t bytes) override { host_memory().zero(p, bytes); }
  void copy_within(void* dst, const void* src, size_t bytes) override {
    ++copies_within;
    host_memory().copy_within(dst, src, bytes);
  }
  void copy_from_host(void* dst, const void* src, size_t bytes) override {
    ++copies_in;
    host_memory().copy_from_host(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    ++copies_out;
    host_memory().copy_to_host(dst, src, bytes);
  }

  std::atomic<int> allocations{0}, copies_within{0}, copies_in{0}, copies_out{0};
};

}  // namespace tunescope::test_support
