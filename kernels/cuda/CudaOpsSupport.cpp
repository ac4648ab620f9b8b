#include "kernels/cuda/CudaOpsSupport.h"

#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaMemory.h"

namespace tunescope::cuda {

DeviceShape device_shape(const Tensor& t) {
  const Shape4& s = t.shape();
  return {s.n, s.c, s.h, s.w, t.layout() == Layout::NHWC};
}

DevicePool device_pool(const PoolParams& p, const Shape4& output) {
  return {p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_h, p.pad_w, output.h, output.w};
}

void check_on_device(const char* op, std::initializer_list<NamedTensor> tensors) {
  for (const auto& [name, t] : tensors)
    if (t->on_host())
      fail(ErrorKind::runtime, op, ": ", name, " is in ", t->memory().name(),
           " memory, not in device memory");
}

int device_of(const char* op, const Tensor& t) {
  const auto* memory = dynamic_cast<const CudaMemory*>(&t.memory());
  if (!memory)
    fail(ErrorKind::runtime, op, ": a tensor in ", t.memory().name(),
         " memory, not in a CUDA device's");
  return memory->device();
}

void check_elementwise_on_device(const char* op, std::initializer_list<NamedTensor> tensors) {
  op_checks::check_elementwise(op, tensors);
  check_on_device(op, tensors);
}

StreamScratch::StreamScratch(size_t bytes, cudaStream_t stream, const char* op) : stream_(stream) {
  if (bytes == 0) return;
  TS_CUDA_CHECK_CTX(cudaMallocAsync(&data_, bytes, stream),
                    cat(op, ": scratch of ", bytes, " bytes"));
}

StreamScratch::~StreamScratch() {
  if (data_) cudaFreeAsync(data_, stream_);
}

}  // namespace tunescope::cuda
