// cuDNN and cuBLAS handles bound to one stream. A handle carries its stream, and lanes
// call kernels concurrently from their own threads, so every stream gets its own pair
// (created on first use on the stream's device, kept for the process's life): ops and
// conv algorithms call handles_for(ctx stream) and never re-point a shared handle.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

namespace tunescope::cuda {

struct StreamHandles {
  cudnnHandle_t cudnn = nullptr;
  cublasHandle_t cublas = nullptr;
};

// Thread-safe. `stream` may be null (the legacy default stream, as in per-layer find
// without a backend stream). cuBLAS keeps its default FP32 math (TF32 only when asked
// for), as cuDNN does in CudnnAlgorithms.h, so results compare with the CPU reference.
const StreamHandles& handles_for(cudaStream_t stream);

// Destroys the handles of `stream` on the current device, if any. The owner of a stream
// calls it before destroying the stream (LaneStreams does), so that a process that
// builds many backends (a tune: one per candidate) keeps no handles of dead streams and
// a later stream at the same address gets fresh handles.
void release_handles(cudaStream_t stream) noexcept;

}  // namespace tunescope::cuda
