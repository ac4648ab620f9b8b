// The spatial-domain kernels of CUDA FFT convolution: copying tensor planes into the
// zero-padded real planes the transforms take, and cropping the transforms' output back
// into a tensor. Tensors are addressed by their (n, c, h, w) element strides, so NCHW and
// NHWC feed the same kernels without a transpose. Plain C++17 for the .cu file.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace tunescope::cuda {

// A tensor in device memory as the kernels see it.
struct DeviceTensorView {
  float* data;
  int64_t stride_n, stride_c, stride_h, stride_w;
  int64_t channels, height, width;
};

// Real planes of rows x cols, packed: plane p at real + p * rows * cols. Plane p stands
// for (image n0 + p / channels, channel p % channels) of the tensor.
struct PlaneWindow {
  int64_t n0 = 0, planes = 0;
  int64_t rows = 1, cols = 1;
  int64_t top = 0, left = 0;  // where (h, w) = (0, 0) lands in the plane
  int64_t step_h = 1, step_w = 1;  // plane rows / columns between neighbouring tensor elements
};

// Zeroes the planes and puts t(n, c, h, w) at (h * step_h + top, w * step_w + left): the
// padding of x, the spreading of a strided dy onto the stride-1 grid.
cudaError_t launch_pack_planes(const DeviceTensorView& t, const PlaneWindow& window, float* real, cudaStream_t stream);

// t(n, c, h, w) = scale * plane[h * step_h + top][w * step_w + left] for every element of
// the window's images: the crop (and stride) of an output, undoing the FFT's scale.
cudaError_t launch_unpack_planes(const float* real, const PlaneWindow& window, float scale, const DeviceTensorView& t,
                                 cudaStream_t stream);

}  // namespace tunescope::cuda
