// 64-byte aligned, zero-filled memory in one memory space (host by default): the
// storage of tensors and of the conv workspaces (the ConvAlgorithm contract promises
// 64-byte aligned workspaces).
#pragma once

#include <cstddef>

#include "core/base/MemorySpace.h"

namespace tunescope {

inline constexpr size_t kBufferAlignment = 64;

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Throws Error(runtime) naming the size when the allocation fails.
  explicit AlignedBuffer(size_t bytes, MemorySpace& space = host_memory());
  ~AlignedBuffer();
  AlignedBuffer(AlignedBuffer&& other) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  MemorySpace& memory() const { return *space_; }

 private:
  void release() noexcept;

  MemorySpace* space_ = &host_memory();
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace tunescope
