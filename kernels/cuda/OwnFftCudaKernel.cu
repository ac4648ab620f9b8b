// The CUDA fft-own kernel (see OwnFftCudaKernel.h): the block's threads run each phase of
// the schedule over its items, with a barrier between phases; the arithmetic is
// CudaFftSchedule.h's, shared with the host emulation the tests check.
#include "kernels/cuda/OwnFftCudaKernel.h"

namespace tunescope::cuda {
namespace {

__global__ void __launch_bounds__(kOwnFftThreads) own_fft_2d(OwnFftLaunch launch) {
  extern __shared__ fft::Cf shared[];
  const fft::FftSchedule& s = launch.schedule;
  const int64_t first = int64_t{blockIdx.x} * launch.planes_per_block;
  const int planes = static_cast<int>(min(int64_t{launch.planes_per_block}, launch.count - first));
  const int64_t buffer_elems = int64_t{launch.planes_per_block} * s.geometry.plane_stride();
  const fft::FftBlock block{launch.row_twiddles,
                            launch.col_twiddles,
                            planes,
                            first,
                            launch.count,
                            launch.real_in,
                            launch.real_out,
                            launch.spectrum_in,
                            launch.spectrum_out,
                            {shared, shared + buffer_elems}};
  for (int t = 0; t < s.count; ++t) {
    const fft::Phase ph = s.phases[t];
    const int items = fft::phase_items(s, ph, block);
    for (int item = threadIdx.x; item < items; item += blockDim.x)
      fft::run_phase_item(s, ph, block, item);
    __syncthreads();
  }
}

}  // namespace

cudaError_t launch_own_fft(const OwnFftLaunch& launch, cudaStream_t stream) {
  if (launch.count <= 0) return cudaSuccess;
  const int64_t blocks = (launch.count + launch.planes_per_block - 1) / launch.planes_per_block;
  const size_t shared_bytes = static_cast<size_t>(
      fft::block_shared_bytes(launch.schedule.geometry, launch.planes_per_block));
  own_fft_2d<<<static_cast<unsigned>(blocks), kOwnFftThreads, shared_bytes, stream>>>(launch);
  return cudaGetLastError();
}

cudaError_t allow_own_fft_shared_bytes(int64_t bytes) {
  return cudaFuncSetAttribute(own_fft_2d, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(bytes));
}

}  // namespace tunescope::cuda
