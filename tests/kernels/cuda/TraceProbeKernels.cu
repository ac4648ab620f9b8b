// Trivial device kernels the GPU tests launch so CUPTI has something real to record.
#include "TraceProbeKernels.h"

namespace tunescope::cuda::test_support {

__global__ void add_one(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

cudaError_t launch_add_one(float* data, int n, cudaStream_t stream) {
  constexpr int kThreads = 256;
  add_one<<<(n + kThreads - 1) / kThreads, kThreads, 0, stream>>>(data, n);
  return cudaGetLastError();
}

}  // namespace tunescope::cuda::test_support
