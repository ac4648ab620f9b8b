// Pack and crop kernels of CUDA FFT convolution (see FftPlaneKernels.h): one thread per
// plane element (pack) or tensor element (crop), grid-stride, consecutive threads on
// consecutive plane columns so the plane side is coalesced.
#include "kernels/cuda/FftPlaneKernels.h"

#include <algorithm>

namespace tunescope::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

__global__ void pack_planes(DeviceTensorView t, PlaneWindow win, float* real) {
  const int64_t total = win.planes * win.rows * win.cols;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t q = i % win.cols, r = i / win.cols % win.rows, p = i / (win.rows * win.cols);
    const int64_t dh = r - win.top, dw = q - win.left;
    float value = 0.0f;
    if (dh >= 0 && dw >= 0 && dh % win.step_h == 0 && dw % win.step_w == 0) {
      const int64_t h = dh / win.step_h, w = dw / win.step_w;
      if (h < t.height && w < t.width) {
        const int64_t n = win.n0 + p / t.channels, c = p % t.channels;
        value = t.data[n * t.stride_n + c * t.stride_c + h * t.stride_h + w * t.stride_w];
      }
    }
    real[i] = value;
  }
}

__global__ void unpack_planes(const float* real, PlaneWindow win, float scale, DeviceTensorView t) {
  const int64_t total = win.planes * t.height * t.width;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t w = i % t.width, h = i / t.width % t.height, p = i / (t.height * t.width);
    const int64_t n = win.n0 + p / t.channels, c = p % t.channels;
    const float* plane = real + p * win.rows * win.cols;
    t.data[n * t.stride_n + c * t.stride_c + h * t.stride_h + w * t.stride_w] =
        scale * plane[(h * win.step_h + win.top) * win.cols + w * win.step_w + win.left];
  }
}

unsigned blocks_for(int64_t total) { return static_cast<unsigned>(std::clamp<int64_t>((total + kThreads - 1) / kThreads, 1, kMaxBlocks)); }

}  // namespace

cudaError_t launch_pack_planes(const DeviceTensorView& t, const PlaneWindow& window, float* real, cudaStream_t stream) {
  const int64_t total = window.planes * window.rows * window.cols;
  if (total == 0) return cudaSuccess;
  pack_planes<<<blocks_for(total), kThreads, 0, stream>>>(t, window, real);
  return cudaGetLastError();
}

cudaError_t launch_unpack_planes(const float* real, const PlaneWindow& window, float scale, const DeviceTensorView& t,
                                 cudaStream_t stream) {
  const int64_t total = window.planes * t.height * t.width;
  if (total == 0) return cudaSuccess;
  unpack_planes<<<blocks_for(total), kThreads, 0, stream>>>(real, window, scale, t);
  return cudaGetLastError();
}

}  // namespace tunescope::cuda
