// Pack and crop kernels of CUDA FFT convolution (see FftPlaneKernels.h): one thread per
// plane element (pack) or tensor element (crop), grid-stride, consecutive threads on
// consecutive plane columns so the plane side is coalesced.
#include "kernels/cuda/FftPlaneKernels.h"

#include <algorithm>

namespace tunescope::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

__global__ void pack_planes(StridedTensorView t, PlaneWindow win, float* real) {
  const int64_t total = win.plane_elements();
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x)
    real[i] = packed_value(t, win, i);
}

__global__ void unpack_planes(const float* real, PlaneWindow win, float scale,
                              StridedTensorView t) {
  const int64_t total = tensor_elements(t, win);
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x)
    unpack_element(real, win, scale, t, i);
}

unsigned blocks_for(int64_t total) {
  return static_cast<unsigned>(
      std::clamp<int64_t>((total + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

}  // namespace

cudaError_t launch_pack_planes(const StridedTensorView& t, const PlaneWindow& window, float* real,
                               cudaStream_t stream) {
  const int64_t total = window.plane_elements();
  if (total == 0) return cudaSuccess;
  pack_planes<<<blocks_for(total), kThreads, 0, stream>>>(t, window, real);
  return cudaGetLastError();
}

cudaError_t launch_unpack_planes(const float* real, const PlaneWindow& window, float scale,
                                 const StridedTensorView& t, cudaStream_t stream) {
  const int64_t total = tensor_elements(t, window);
  if (total == 0) return cudaSuccess;
  unpack_planes<<<blocks_for(total), kThreads, 0, stream>>>(real, window, scale, t);
  return cudaGetLastError();
}

}  // namespace tunescope::cuda
