// Trivial device kernels the GPU tests launch so CUPTI has something real to record.
#pragma once

#include <cuda_runtime_api.h>

namespace tunescope::cuda::test_support {

// data[i] += 1 for i < n, on `stream`; returns the launch status.
cudaError_t launch_add_one(float* data, int n, cudaStream_t stream);

}  // namespace tunescope::cuda::test_support
