// The index math of CUDA FFT convolution's spatial-domain steps, one element at a time,
// for the device kernels (FftPlaneKernels.cu) and the host emulation of the passes the
// tests run (FftConvPasses.h). Tensors are addressed by their (n, c, h, w) element
// strides, so NCHW and NHWC go through the same code. Plain C++17.
#pragma once

#include <cstdint>

#include "kernels/cuda/CudaFftSchedule.h"  // TS_FFT_HD

namespace tunescope::cuda {

// A tensor as the index math sees it: its data (device memory in the kernels, host memory
// in the tests) and its element strides.
struct StridedTensorView {
  float* data;
  int64_t stride_n, stride_c, stride_h, stride_w;
  int64_t channels, height, width;
};

// Real planes of rows x cols, packed: plane p at real + p * rows * cols. Plane p stands
// for (image n0 + p / channels, channel p % channels) of the tensor.
struct PlaneWindow {
  int64_t n0 = 0, planes = 0;
  int64_t rows = 1, cols = 1;
  int64_t top = 0, left = 0;       // where (h, w) = (0, 0) lands in the plane
  int64_t step_h = 1, step_w = 1;  // plane rows / columns between neighbouring tensor elements

  TS_FFT_HD int64_t plane_elements() const { return planes * rows * cols; }
};

TS_FFT_HD int64_t tensor_elements(const StridedTensorView& t, const PlaneWindow& win) {
  return win.planes * t.height * t.width;
}

// Element i of the packed planes: t(n, c, h, w) where (h * step_h + top, w * step_w +
// left) is i's position, zero elsewhere (the padding of x, the gaps of a spread dy).
TS_FFT_HD float packed_value(const StridedTensorView& t, const PlaneWindow& win, int64_t i) {
  const int64_t q = i % win.cols, r = i / win.cols % win.rows, p = i / (win.rows * win.cols);
  const int64_t dh = r - win.top, dw = q - win.left;
  if (dh < 0 || dw < 0 || dh % win.step_h != 0 || dw % win.step_w != 0) return 0.0f;
  const int64_t h = dh / win.step_h, w = dw / win.step_w;
  if (h >= t.height || w >= t.width) return 0.0f;
  const int64_t n = win.n0 + p / t.channels, c = p % t.channels;
  return t.data[n * t.stride_n + c * t.stride_c + h * t.stride_h + w * t.stride_w];
}

// Tensor element i of the window's images (i over planes x height x width) takes
// scale * plane[h * step_h + top][w * step_w + left]: the crop (and stride) of an output.
TS_FFT_HD void unpack_element(const float* real, const PlaneWindow& win, float scale,
                              const StridedTensorView& t, int64_t i) {
  const int64_t w = i % t.width, h = i / t.width % t.height, p = i / (t.height * t.width);
  const int64_t n = win.n0 + p / t.channels, c = p % t.channels;
  const float* plane = real + p * win.rows * win.cols;
  t.data[n * t.stride_n + c * t.stride_c + h * t.stride_h + w * t.stride_w] =
      scale * plane[(h * win.step_h + win.top) * win.cols + w * win.step_w + win.left];
}

}  // namespace tunescope::cuda
