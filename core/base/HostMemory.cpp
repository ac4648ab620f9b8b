// Host memory, and the accounting behind the allocation cap (AllocationCap.h).
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/base/AlignedBuffer.h"
#include "core/base/AllocationCap.h"
#include "core/base/Error.h"

namespace tunescope {

namespace {
// Counted in the allocator's usable sizes, the one figure both ends of a buffer's life
// agree on whatever rounding aligned_alloc did.
std::atomic<size_t> g_allocated{0};
std::atomic<size_t> g_cap{0};

class HostMemory final : public MemorySpace {
 public:
  std::string name() const override { return "host"; }
  bool host_accessible() const override { return true; }

  void* allocate(size_t bytes) override {
    const size_t rounded = (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
    if (const size_t cap = g_cap.load(); cap > 0 && g_allocated.load() + rounded > cap)
      fail(ErrorKind::runtime, "cannot allocate ", bytes, " bytes: allocation cap of ", cap,
           " bytes (", g_allocated.load(), " held)");
    void* p = std::aligned_alloc(kBufferAlignment, rounded);
    if (!p) fail(ErrorKind::runtime, "cannot allocate ", bytes, " bytes of aligned host memory");
    g_allocated.fetch_add(malloc_usable_size(p));
    return p;
  }
  void deallocate(void* p, size_t) noexcept override {
    g_allocated.fetch_sub(malloc_usable_size(p));
    std::free(p);
  }
  void zero(void* p, size_t bytes) override { std::memset(p, 0, bytes); }
  void copy_within(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copy_from_host(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
};
}  // namespace

size_t allocated_bytes() { return g_allocated.load(); }
size_t allocation_cap() { return g_cap.load(); }
void set_allocation_cap(size_t bytes) { g_cap.store(bytes); }

MemorySpace& host_memory() {
  static HostMemory memory;
  return memory;
}

void copy_between(MemorySpace& dst_space, void* dst, MemorySpace& src_space, const void* src,
                  size_t bytes) {
  if (bytes == 0) return;
  if (&dst_space == &src_space) return dst_space.copy_within(dst, src, bytes);
  if (src_space.host_accessible()) return dst_space.copy_from_host(dst, src, bytes);
  if (dst_space.host_accessible()) return src_space.copy_to_host(dst, src, bytes);
  std::vector<unsigned char> staging(bytes);
  src_space.copy_to_host(staging.data(), src, bytes);
  dst_space.copy_from_host(dst, staging.data(), bytes);
}

}  // namespace tunescope
