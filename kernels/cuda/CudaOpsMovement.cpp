// Data movement on the device: the layout transpose, and the collectives of a split
// batch between tensors of one device (NCCL across devices is not part of this
// backend yet). scatter_rows is also the upload of a batch: `batch` may be a host
// tensor, copied with cudaMemcpyAsync from pageable memory (the call returns once the
// driver has staged the source, so the loader may reuse it).
#include <algorithm>

#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaOps.h"
#include "kernels/cuda/CudaOpsSupport.h"

namespace tunescope::cuda {

void CudaOps::transpose(const ExecContext& ctx, const Tensor& x, Tensor& y) {
  op_checks::check_transpose(x, y);
  check_on_device("transpose", {{"x", &x}, {"y", &y}});
  OpRange range(ctx, x.layout() == Layout::NCHW ? "transpose.nchw_to_nhwc" : "transpose.nhwc_to_nchw");
  TS_CUDA_CHECK(launch_transpose(x.data(), y.data(), device_shape(x), stream_of(ctx)));
}

void CudaOps::scatter_rows(const ExecContext& ctx, const Tensor& batch, int64_t first, Tensor& shard) {
  op_checks::check_scatter(batch, first, shard);
  check_on_device("scatter", {{"shard", &shard}});
  OpRange range(ctx, "scatter");
  const int64_t item = shard.shape().item_count();
  const int64_t copied = std::min(shard.shape().n, batch.shape().n - first) * item;
  const size_t copied_bytes = static_cast<size_t>(copied) * sizeof(float);
  const cudaMemcpyKind kind = batch.on_host() ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice;
  TS_CUDA_CHECK(cudaMemcpyAsync(shard.data(), batch.data() + first * item, copied_bytes, kind, stream_of(ctx)));
  if (copied_bytes < shard.bytes())  // a partial last shard: the rows past the batch are zero
    TS_CUDA_CHECK(cudaMemsetAsync(shard.data() + copied, 0, shard.bytes() - copied_bytes, stream_of(ctx)));
}

void CudaOps::allreduce_sum(const ExecContext& ctx, std::span<const Tensor* const> sources, float scale, Tensor& out) {
  if (sources.empty()) fail(ErrorKind::runtime, "allreduce: no sources");
  if (sources.size() > static_cast<size_t>(kMaxSumSources))
    fail(ErrorKind::unsupported, "allreduce: ", sources.size(), " sources on one device (at most ", kMaxSumSources,
         ")");
  SumSources list;
  for (const Tensor* source : sources) {
    op_checks::check_alike("allreduce", *source, out);
    check_on_device("allreduce", {{"source", source}});
    list.data[list.count++] = source->data();
  }
  check_on_device("allreduce", {{"out", &out}});
  OpRange range(ctx, "allreduce");
  TS_CUDA_CHECK(launch_scaled_sum(list, scale, out.data(), out.size(), stream_of(ctx)));
}

void CudaOps::broadcast(const ExecContext& ctx, const Tensor& source, std::span<Tensor* const> targets) {
  for (const Tensor* target : targets) {
    op_checks::check_alike("broadcast", source, *target);
    check_on_device("broadcast", {{"target", target}});
  }
  if (targets.empty()) return;
  check_on_device("broadcast", {{"source", &source}});
  OpRange range(ctx, "broadcast");
  for (Tensor* target : targets)
    if (target->data() != source.data())
      TS_CUDA_CHECK(cudaMemcpyAsync(target->data(), source.data(), source.bytes(), cudaMemcpyDeviceToDevice,
                                    stream_of(ctx)));
}

}  // namespace tunescope::cuda
