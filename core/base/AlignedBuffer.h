// 64-byte aligned, zero-filled host memory: the storage of tensors and of the conv
// workspaces (the ConvAlgorithm contract promises 64-byte aligned workspaces).
#pragma once

#include <cstddef>
#include <memory>

namespace tunescope {

inline constexpr size_t kBufferAlignment = 64;

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Throws Error(runtime) naming the size when the allocation fails.
  explicit AlignedBuffer(size_t bytes);

  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> data_;
  size_t bytes_ = 0;
};

}  // namespace tunescope
