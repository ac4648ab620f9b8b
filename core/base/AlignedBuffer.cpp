#include "core/base/AlignedBuffer.h"

#include <utility>

namespace tunescope {

AlignedBuffer::AlignedBuffer(size_t bytes, MemorySpace& space) : space_(&space), bytes_(bytes) {
  if (bytes == 0) return;
  data_ = space.allocate(bytes);
  try {
    space.zero(data_, bytes);
  } catch (...) {
    space.deallocate(data_, bytes);
    throw;
  }
}

AlignedBuffer::~AlignedBuffer() { release(); }

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : space_(other.space_),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    release();
    space_ = other.space_;
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void AlignedBuffer::release() noexcept {
  if (data_) space_->deallocate(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace tunescope
