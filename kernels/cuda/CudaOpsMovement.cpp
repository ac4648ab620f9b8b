// Data movement on the device: the layout transpose, the upload of a batch, and the
// collectives of a split batch. scatter_rows is also the upload of a batch: `batch` may
// be a host tensor, copied with cudaMemcpyAsync on the lane's stream; from the backend's
// pinned staging memory (PinnedHostMemory, where the data loader assembles batches) that
// is a DMA that returns at once, from pageable memory the driver stages it before
// returning. The collectives sum with one kernel when every tensor is on one device, and
// reduce through DeviceCollectives (NCCL) when the replicas run one per device.
#include <algorithm>
#include <vector>

#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaOps.h"
#include "kernels/cuda/CudaOpsSupport.h"
#include "kernels/cuda/DeviceCollectives.h"

namespace tunescope::cuda {

void CudaOps::transpose(const ExecContext& ctx, const Tensor& x, Tensor& y) {
  op_checks::check_transpose(x, y);
  check_on_device("transpose", {{"x", &x}, {"y", &y}});
  OpRange range(ctx,
                x.layout() == Layout::NCHW ? "transpose.nchw_to_nhwc" : "transpose.nhwc_to_nchw");
  TS_CUDA_CHECK(launch_transpose(x.data(), y.data(), device_shape(x), stream_of(ctx)));
}

void CudaOps::scatter_rows(const ExecContext& ctx, const Tensor& batch, int64_t first,
                           Tensor& shard) {
  op_checks::check_scatter(batch, first, shard);
  check_on_device("scatter", {{"shard", &shard}});
  OpRange range(ctx, "scatter");
  const int64_t item = shard.shape().item_count();
  const int64_t copied = std::min(shard.shape().n, batch.shape().n - first) * item;
  const size_t copied_bytes = static_cast<size_t>(copied) * sizeof(float);
  const cudaMemcpyKind kind = batch.on_host() ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice;
  TS_CUDA_CHECK(cudaMemcpyAsync(shard.data(), batch.data() + first * item, copied_bytes, kind,
                                stream_of(ctx)));
  if (copied_bytes < shard.bytes())  // a partial last shard: the rows past the batch are zero
    TS_CUDA_CHECK(
        cudaMemsetAsync(shard.data() + copied, 0, shard.bytes() - copied_bytes, stream_of(ctx)));
}

void CudaOps::allreduce_sum(const ExecContext& ctx, std::span<const Tensor* const> sources,
                            float scale, Tensor& out) {
  if (sources.empty()) fail(ErrorKind::runtime, "allreduce: no sources");
  for (const Tensor* source : sources)
    op_checks::check_alike("allreduce", *source, out);  // the CPU's checks first
  check_on_device("allreduce", {{"out", &out}});
  const int root_device = device_of("allreduce", out);
  std::vector<const float*> data;
  std::vector<int> devices;
  bool one_device = true;
  for (const Tensor* source : sources) {
    check_on_device("allreduce", {{"source", source}});
    data.push_back(source->data());
    devices.push_back(device_of("allreduce", *source));
    one_device = one_device && devices.back() == root_device;
  }
  OpRange range(ctx, "allreduce");
  if (one_device) {
    if (sources.size() > static_cast<size_t>(kMaxSumSources))
      fail(ErrorKind::unsupported, "allreduce: ", sources.size(),
           " sources on one device (at most ", kMaxSumSources, ")");
    SumSources list;
    for (const float* p : data) list.data[list.count++] = p;
    TS_CUDA_CHECK(launch_scaled_sum(list, scale, out.data(), out.size(), stream_of(ctx)));
    return;
  }
  // Replicas one per device: NCCL sums into out on its device (the caller's), then the
  // scale runs there as a one-source scaled sum.
  if (ctx.device != root_device)
    fail(ErrorKind::runtime, "allreduce: out is on cuda:", root_device,
         " but the lane runs on cuda:", ctx.device);
  size_t root = devices.size();
  for (size_t i = 0; i < devices.size(); ++i) {
    if (std::count(devices.begin(), devices.end(), devices[i]) > 1)
      fail(ErrorKind::unsupported, "allreduce: several sources on cuda:", devices[i],
           " among sources on several devices (one replica per device)");
    if (devices[i] == root_device) root = i;
  }
  if (root == devices.size())
    fail(ErrorKind::runtime, "allreduce: no source on cuda:", root_device, ", the device of out");
  if (!collectives_)
    fail(ErrorKind::unsupported, "allreduce: sources on several devices and no device collectives");
  collectives_->reduce_sum(data, devices, root, out.data(), out.size(), stream_of(ctx));
  SumSources sum;
  sum.data[sum.count++] = out.data();
  TS_CUDA_CHECK(launch_scaled_sum(sum, scale, out.data(), out.size(), stream_of(ctx)));
}

void CudaOps::broadcast(const ExecContext& ctx, const Tensor& source,
                        std::span<Tensor* const> targets) {
  for (const Tensor* target : targets) {
    op_checks::check_alike("broadcast", source, *target);
    check_on_device("broadcast", {{"target", target}});
  }
  if (targets.empty()) return;
  check_on_device("broadcast", {{"source", &source}});
  OpRange range(ctx, "broadcast");
  // cudaMemcpyDefault: a target on another device (a replica per device) is a peer copy,
  // direct where the backend enabled peer access, staged by the driver otherwise.
  for (Tensor* target : targets)
    if (target->data() != source.data())
      TS_CUDA_CHECK(cudaMemcpyAsync(target->data(), source.data(), source.bytes(),
                                    cudaMemcpyDefault, stream_of(ctx)));
}

namespace {

// One stream-ordered copy across the host/device boundary: from or to the backend's
// pinned staging memory it is an asynchronous DMA the lane thread does not wait for.
void copy_across(const ExecContext& ctx, const char* op, const Tensor& src, Tensor& dst,
                 cudaMemcpyKind kind) {
  op_checks::check_alike(op, src, dst);
  const Tensor& device_side = kind == cudaMemcpyDeviceToHost ? src : dst;
  const Tensor& host_side = kind == cudaMemcpyDeviceToHost ? dst : src;
  check_on_device(op, {{"device tensor", &device_side}});
  if (!host_side.on_host())
    fail(ErrorKind::runtime, op, ": the host tensor is in ", host_side.memory().name(),
         ", not host memory");
  OpRange range(ctx, op);
  TS_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.bytes(), kind, stream_of(ctx)));
}

}  // namespace

void CudaOps::copy_to_host(const ExecContext& ctx, const Tensor& src, Tensor& host_dst) {
  copy_across(ctx, "memcpy.dtoh", src, host_dst, cudaMemcpyDeviceToHost);
}

void CudaOps::copy_from_host(const ExecContext& ctx, const Tensor& host_src, Tensor& dst) {
  copy_across(ctx, "memcpy.htod", host_src, dst, cudaMemcpyHostToDevice);
}

}  // namespace tunescope::cuda
