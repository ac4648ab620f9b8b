// The launch of the CUDA fft-own kernel: one thread block per group of planes, running
// the phases of a CudaFftSchedule.h schedule in shared memory. Kept to plain C++17 so both
// the .cu file and the C++20 host code include it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/CudaFftSchedule.h"

namespace tunescope::cuda {

struct OwnFftLaunch {
  fft::FftSchedule schedule;              // r2c (dir -1) or c2r (dir +1)
  const fft::Cf* row_twiddles = nullptr;  // device, cols entries
  const fft::Cf* col_twiddles = nullptr;  // device, rows entries
  int64_t count = 0;                      // planes
  int planes_per_block = 1;
  const float* real_in = nullptr;
  float* real_out = nullptr;
  const fft::Cf* spectrum_in = nullptr;
  fft::Cf* spectrum_out = nullptr;
};

// Threads per block: the phases stride over their items with this many threads.
constexpr int kOwnFftThreads = 256;

// Enqueues the transform on `stream`; the launch status (cudaGetLastError).
cudaError_t launch_own_fft(const OwnFftLaunch& launch, cudaStream_t stream);

// Lets the kernel use `bytes` of dynamic shared memory on the current device (the opt-in
// past 48 KB); the status of cudaFuncSetAttribute.
cudaError_t allow_own_fft_shared_bytes(int64_t bytes);

}  // namespace tunescope::cuda
