#include "kernels/cuda/StreamHandles.h"

#include <map>
#include <mutex>
#include <utility>

#include "kernels/cuda/CudaCheck.h"

namespace tunescope::cuda {

const StreamHandles& handles_for(cudaStream_t stream) {
  static std::mutex mutex;
  // Keyed by (device, stream): the legacy default stream is one per device.
  static std::map<std::pair<int, cudaStream_t>, StreamHandles> handles;
  int device = 0;
  TS_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard lock(mutex);
  StreamHandles& h = handles[{device, stream}];
  if (!h.cudnn) {
    TS_CUDA_CHECK_CTX(cudnnCreate(&h.cudnn), "creating a cuDNN handle for a lane stream");
    TS_CUDA_CHECK(cudnnSetStream(h.cudnn, stream));
  }
  if (!h.cublas) {
    TS_CUDA_CHECK_CTX(cublasCreate(&h.cublas), "creating a cuBLAS handle for a lane stream");
    TS_CUDA_CHECK(cublasSetStream(h.cublas, stream));
    TS_CUDA_CHECK(cublasSetMathMode(h.cublas, CUBLAS_DEFAULT_MATH));
  }
  return h;
}

}  // namespace tunescope::cuda
