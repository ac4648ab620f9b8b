// The spatial-domain kernels of CUDA FFT convolution: copying tensor planes into the
// zero-padded real planes the transforms take, and cropping the transforms' output back
// into a tensor, one thread per element of FftPlaneIndex.h's math. Plain C++17.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/FftPlaneIndex.h"

namespace tunescope::cuda {

// Zeroes the planes and puts t(n, c, h, w) at (h * step_h + top, w * step_w + left): the
// padding of x, the spreading of a strided dy onto the stride-1 grid.
cudaError_t launch_pack_planes(const StridedTensorView& t, const PlaneWindow& window, float* real,
                               cudaStream_t stream);

// t(n, c, h, w) = scale * plane[h * step_h + top][w * step_w + left] for every element of
// the window's images: the crop (and stride) of an output, undoing the FFT's scale.
cudaError_t launch_unpack_planes(const float* real, const PlaneWindow& window, float scale,
                                 const StridedTensorView& t, cudaStream_t stream);

}  // namespace tunescope::cuda
