// Aligned host buffers, and the accounting behind the allocation cap (AllocationCap.h).
#include "core/base/AlignedBuffer.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/base/AllocationCap.h"
#include "core/base/Error.h"

namespace tunescope {

namespace {
// Counted in the allocator's usable sizes, the one figure both ends of a buffer's life
// can see (Free gets only the pointer).
std::atomic<size_t> g_allocated{0};
std::atomic<size_t> g_cap{0};
}  // namespace

size_t allocated_bytes() { return g_allocated.load(); }
size_t allocation_cap() { return g_cap.load(); }
void set_allocation_cap(size_t bytes) { g_cap.store(bytes); }

void AlignedBuffer::Free::operator()(void* p) const {
  g_allocated.fetch_sub(malloc_usable_size(p));
  std::free(p);
}

AlignedBuffer::AlignedBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const size_t rounded = (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  if (const size_t cap = g_cap.load(); cap > 0 && g_allocated.load() + rounded > cap)
    fail(ErrorKind::runtime, "cannot allocate ", bytes, " bytes: allocation cap of ", cap, " bytes (",
         g_allocated.load(), " held)");
  void* p = std::aligned_alloc(kBufferAlignment, rounded);
  if (!p) fail(ErrorKind::runtime, "cannot allocate ", bytes, " bytes of aligned memory");
  g_allocated.fetch_add(malloc_usable_size(p));
  std::memset(p, 0, rounded);
  data_.reset(p);
}

}  // namespace tunescope
