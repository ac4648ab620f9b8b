#include "core/base/AlignedBuffer.h"

#include <cstdlib>
#include <cstring>

#include "core/base/Error.h"

namespace tunescope {

void AlignedBuffer::Free::operator()(void* p) const { std::free(p); }

AlignedBuffer::AlignedBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const size_t rounded = (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  void* p = std::aligned_alloc(kBufferAlignment, rounded);
  if (!p) fail(ErrorKind::runtime, "cannot allocate ", bytes, " bytes of aligned memory");
  std::memset(p, 0, rounded);
  data_.reset(p);
}

}  // namespace tunescope
