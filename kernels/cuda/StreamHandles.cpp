#include "kernels/cuda/StreamHandles.h"

#include <map>
#include <mutex>
#include <utility>

#include "kernels/cuda/CudaCheck.h"

namespace tunescope::cuda {

namespace {

struct HandleTable {
  std::mutex mutex;
  // Keyed by (device, stream): the legacy default stream is one per device.
  std::map<std::pair<int, cudaStream_t>, StreamHandles> handles;
};

HandleTable& table() {
  static HandleTable instance;
  return instance;
}

}  // namespace

const StreamHandles& handles_for(cudaStream_t stream) {
  HandleTable& t = table();
  int device = 0;
  TS_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard lock(t.mutex);
  StreamHandles& h = t.handles[{device, stream}];
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

void release_handles(cudaStream_t stream) noexcept {
  HandleTable& t = table();
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return;
  std::lock_guard lock(t.mutex);
  auto it = t.handles.find({device, stream});
  if (it == t.handles.end()) return;
  if (it->second.cudnn) cudnnDestroy(it->second.cudnn);
  if (it->second.cublas) cublasDestroy(it->second.cublas);
  t.handles.erase(it);
}

}  // namespace tunescope::cuda
