// Device-side building blocks shared by the op kernels' .cu files: the grid-stride loop
// every elementwise kernel uses, the launch over grid_for(count) and the channel of a physical
// offset in either layout.
#pragma once

#include <cstdint>

#include "kernels/cuda/DeviceKernels.h"
#include "kernels/cuda/LaunchGeometry.h"

namespace tunescope::cuda {

// The grid-stride loop: `for (int64_t i = grid_first(); i < count; i += grid_step())`
// visits every i in [0, count) once, spread over the whole grid.
__device__ inline int64_t grid_first() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t grid_step() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// The channel of physical offset i: planes of H*W in NCHW, the innermost index in NHWC.
__device__ inline int64_t channel_of(int64_t i, const DeviceShape& s) {
  return s.nhwc ? i % s.c : (i / s.plane()) % s.c;
}

// A kernel launched on grid_for(count): one thread per item until kMaxBlocks.
template <typename Kernel, typename... Args>
cudaError_t launch_over(int64_t count, cudaStream_t stream, Kernel kernel, Args... args) {
  if (count <= 0) return cudaSuccess;
  const Grid1d grid = grid_for(count);
  kernel<<<grid.blocks, grid.threads, 0, stream>>>(args...);
  return cudaGetLastError();
}

}  // namespace tunescope::cuda
