// A dense float32 tensor with logical (n, c, h, w) indexing and a physical layout
// (NCHW or NHWC), stored in one memory space (host by default; a device's memory on the
// CUDA backend). Storage is 64-byte aligned and zero-initialised. Element access (at)
// needs host memory; to_host() and copy_tensor() move tensors between spaces.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/base/AlignedBuffer.h"
#include "core/base/Layout.h"
#include "core/base/Shape4.h"

namespace tunescope {

// Distance in elements between neighbours along each logical dimension.
struct Strides4 {
  int64_t n, c, h, w;
};

Strides4 strides_for(const Shape4& shape, Layout layout);

class Tensor {
 public:
  Tensor() = default;
  Tensor(Shape4 shape, Layout layout, MemorySpace& memory = host_memory());
  // Copies stay in the source's memory space.
  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;

  const Shape4& shape() const { return shape_; }
  Layout layout() const { return layout_; }
  const Strides4& strides() const { return strides_; }
  int64_t size() const { return shape_.count(); }
  size_t bytes() const { return static_cast<size_t>(size()) * sizeof(float); }
  bool empty() const { return size() == 0 || !storage_.data(); }
  MemorySpace& memory() const { return storage_.memory(); }
  bool on_host() const { return storage_.memory().host_accessible(); }

  float* data() { return static_cast<float*>(storage_.data()); }
  const float* data() const { return static_cast<const float*>(storage_.data()); }

  int64_t offset(int64_t n, int64_t c, int64_t h, int64_t w) const {
    return n * strides_.n + c * strides_.c + h * strides_.h + w * strides_.w;
  }
  float& at(int64_t n, int64_t c, int64_t h, int64_t w) { return data()[offset(n, c, h, w)]; }
  float at(int64_t n, int64_t c, int64_t h, int64_t w) const { return data()[offset(n, c, h, w)]; }

  // Both work in any memory space (fill stages a host copy for device memory).
  void fill(float value);
  void zero();

 private:
  Shape4 shape_{0, 0, 0, 0};
  Layout layout_ = Layout::NCHW;
  Strides4 strides_{0, 0, 0, 0};
  AlignedBuffer storage_;
};

// dst = src: same shape and layout, any two memory spaces.
void copy_tensor(const Tensor& src, Tensor& dst);
// A host copy of `tensor` (a copy even when it is on the host already).
Tensor to_host(const Tensor& tensor);
// A copy of `tensor` in `memory`.
Tensor to_memory(const Tensor& tensor, MemorySpace& memory);

// Copies src into dst element by element by logical index; dst may have the other
// layout but must have the same shape. The one layout conversion of the code base:
// the traced transpose kernel of every backend's ops calls this on the host.
class ThreadPool;
// Both must be host tensors.
void convert_layout(const Tensor& src, Tensor& dst, ThreadPool* pool = nullptr);

}  // namespace tunescope
