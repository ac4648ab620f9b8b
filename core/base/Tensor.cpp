#include "core/base/Tensor.h"

#include <algorithm>
#include <cstring>

#include "core/base/Error.h"
#include "core/base/ThreadPool.h"

namespace tunescope {

Strides4 strides_for(const Shape4& s, Layout layout) {
  if (layout == Layout::NCHW) return {s.c * s.h * s.w, s.h * s.w, s.w, 1};
  return {s.h * s.w * s.c, 1, s.w * s.c, s.c};
}

Tensor::Tensor(Shape4 shape, Layout layout, MemorySpace& memory)
    : shape_(shape), layout_(layout), strides_(strides_for(shape, layout)) {
  if (shape.n < 0 || shape.c < 0 || shape.h < 0 || shape.w < 0)
    fail(ErrorKind::usage, "tensor shape ", shape.str(), " has a negative dimension");
  try {
    storage_ = AlignedBuffer(static_cast<size_t>(shape.count()) * sizeof(float), memory);
  } catch (const Error& e) {
    fail(ErrorKind::runtime, "tensor ", shape.str(), ": ", e.what());
  }
}

Tensor::Tensor(const Tensor& other) : Tensor(other.shape_, other.layout_, other.memory()) {
  if (other.storage_.data()) memory().copy_within(data(), other.data(), other.bytes());
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) *this = Tensor(other);
  return *this;
}

void Tensor::fill(float value) {
  if (on_host()) {
    std::fill_n(data(), size(), value);
    return;
  }
  Tensor staged(shape_, layout_);
  staged.fill(value);
  copy_tensor(staged, *this);
}

void Tensor::zero() {
  if (!empty()) memory().zero(data(), bytes());
}

void copy_tensor(const Tensor& src, Tensor& dst) {
  if (!(src.shape() == dst.shape()) || src.layout() != dst.layout())
    fail(ErrorKind::runtime, "copy_tensor: ", src.shape().str(), " ", to_string(src.layout()),
         " into ", dst.shape().str(), " ", to_string(dst.layout()));
  if (src.empty()) return;
  copy_between(dst.memory(), dst.data(), src.memory(), src.data(), src.bytes());
}

Tensor to_memory(const Tensor& tensor, MemorySpace& memory) {
  Tensor copy(tensor.shape(), tensor.layout(), memory);
  copy_tensor(tensor, copy);
  return copy;
}

Tensor to_host(const Tensor& tensor) { return to_memory(tensor, host_memory()); }

void convert_layout(const Tensor& src, Tensor& dst, ThreadPool* pool) {
  if (!src.on_host() || !dst.on_host())
    fail(ErrorKind::runtime, "convert_layout: needs host tensors, got ", src.memory().name(),
         " and ", dst.memory().name());
  if (!(src.shape() == dst.shape()))
    fail(ErrorKind::runtime, "convert_layout: shapes differ (", src.shape().str(), " vs ",
         dst.shape().str(), ")");
  const Shape4 s = src.shape();
  auto rows = [&](int64_t begin, int64_t end) {
    // One (n, h) row of all channels and columns per step: contiguous on the NHWC side.
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / s.h, h = row % s.h;
      for (int64_t c = 0; c < s.c; ++c)
        for (int64_t w = 0; w < s.w; ++w) dst.at(n, c, h, w) = src.at(n, c, h, w);
    }
  };
  if (pool)
    pool->parallel_for(s.n * s.h, rows, 4);
  else
    rows(0, s.n * s.h);
}

}  // namespace tunescope
