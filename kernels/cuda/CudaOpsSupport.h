// Host-side helpers of the CUDA op kernels: the lane's stream, a tensor as the device
// kernels see it, the device-memory check, stream-ordered scratch memory and the
// traced range of one op. Private to kernels/cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <initializer_list>
#include <utility>

#include "core/base/ExecContext.h"
#include "core/base/OpChecks.h"
#include "core/base/Tensor.h"
#include "kernels/cuda/DeviceKernels.h"
#include "profiler/Tracer.h"

namespace tunescope::cuda {

inline cudaStream_t stream_of(const ExecContext& ctx) { return ctx.stream.as<CUstream_st>(); }

DeviceShape device_shape(const Tensor& t);
DevicePool device_pool(const PoolParams& params, const Shape4& output);

// Throws Error(runtime) "<op>: <name> is in <space> memory, not in device memory" for
// the first named tensor the host can read (the kernels would fault on its pointer).
using op_checks::NamedTensor;
void check_on_device(const char* op, std::initializer_list<NamedTensor> tensors);
// The device whose memory holds `t` (a tensor check_on_device accepted); throws
// Error(runtime) naming `op` for memory of another backend.
int device_of(const char* op, const Tensor& t);
// check_elementwise (the CPU's check), then check_on_device, of the same tensors.
void check_elementwise_on_device(const char* op, std::initializer_list<NamedTensor> tensors);

// Device memory for one op's temporaries, allocated and freed in stream order
// (cudaMallocAsync / cudaFreeAsync on the lane's stream): the free is ordered after the
// kernels that use it, and the pool reuses the memory for the next call.
class StreamScratch {
 public:
  StreamScratch(size_t bytes, cudaStream_t stream, const char* op);
  ~StreamScratch();
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  template <typename T>
  T* as(size_t offset_bytes = 0) const {
    return reinterpret_cast<T*>(static_cast<char*>(data_) + offset_bytes);
  }

 private:
  void* data_ = nullptr;
  cudaStream_t stream_;
};

// The range an op is traced as (a phase on the op's device and lane).
class OpRange {
 public:
  OpRange(const ExecContext& ctx, const char* name)
      : range_(ctx.tracer, name, profiler::RangeCategory::phase, ctx.device, ctx.lane) {}

 private:
  profiler::RangeScope range_;
};

}  // namespace tunescope::cuda
