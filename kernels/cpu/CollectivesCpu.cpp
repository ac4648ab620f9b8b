// The collectives of a split batch on one host, and the copies of the update on the
// host: replicas share the host's memory, so each is one parallel loop over the flat
// float storage (shapes and layouts are checked once, so the loops need no logical
// indexing) on the calling lane.
#include <algorithm>
#include <cstring>

#include "core/base/Error.h"
#include "core/base/OpChecks.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuOps.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {

namespace {

using profiler::KernelScope;

constexpr int64_t kGrain = 16384;  // floats per chunk: small tensors stay on one thread

// dst = src, traced as the memcpy kernel `name`: the cpu backend's memory is the host's.
void traced_copy(const ExecContext& ctx, const char* name, const Tensor& src, Tensor& dst) {
  op_checks::check_alike(name, src, dst);
  KernelScope kernel(ctx.tracer, name, ctx.device, ctx.lane, 0,
                     2.0 * static_cast<double>(src.bytes()), profiler::ActivityKind::memcpy);
  ctx.pool.parallel_for(
      src.size(),
      [&](int64_t begin, int64_t end) {
        std::memcpy(dst.data() + begin, src.data() + begin,
                    static_cast<size_t>(end - begin) * sizeof(float));
      },
      kGrain);
}

}  // namespace

void CpuOps::scatter_rows(const ExecContext& ctx, const Tensor& batch, int64_t first,
                          Tensor& shard) {
  op_checks::check_scatter(batch, first, shard);
  const Shape4 b = batch.shape(), s = shard.shape();
  KernelScope kernel(ctx.tracer, "scatter", ctx.device, ctx.lane, 0,
                     2.0 * static_cast<double>(shard.bytes()), profiler::ActivityKind::memcpy);
  const int64_t copied = std::min(s.n, b.n - first) * s.item_count();
  const float* from = batch.data() + first * s.item_count();
  float* to = shard.data();
  ctx.pool.parallel_for(
      shard.size(),
      [&](int64_t begin, int64_t end) {
        const int64_t split = std::clamp(copied, begin, end);
        std::memcpy(to + begin, from + begin, static_cast<size_t>(split - begin) * sizeof(float));
        std::memset(to + split, 0, static_cast<size_t>(end - split) * sizeof(float));
      },
      kGrain);
}

void CpuOps::allreduce_sum(const ExecContext& ctx, std::span<const Tensor* const> sources,
                           float scale, Tensor& out) {
  if (sources.empty()) fail(ErrorKind::runtime, "allreduce: no sources");
  for (const Tensor* source : sources) op_checks::check_alike("allreduce", *source, out);
  KernelScope kernel(ctx.tracer, "allreduce", ctx.device, ctx.lane,
                     static_cast<double>(out.size() * sources.size()),
                     static_cast<double>(out.bytes() * (sources.size() + 1)));
  float* result = out.data();
  ctx.pool.parallel_for(
      out.size(),
      [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          float sum = 0;
          for (const Tensor* source : sources) sum += source->data()[i];
          result[i] = scale * sum;
        }
      },
      kGrain);
}

void CpuOps::broadcast(const ExecContext& ctx, const Tensor& source,
                       std::span<Tensor* const> targets) {
  for (const Tensor* target : targets) op_checks::check_alike("broadcast", source, *target);
  if (targets.empty()) return;
  KernelScope kernel(ctx.tracer, "broadcast", ctx.device, ctx.lane, 0,
                     static_cast<double>(source.bytes() * (targets.size() + 1)),
                     profiler::ActivityKind::memcpy);
  ctx.pool.parallel_for(
      source.size(),
      [&](int64_t begin, int64_t end) {
        for (Tensor* target : targets)
          std::memcpy(target->data() + begin, source.data() + begin,
                      static_cast<size_t>(end - begin) * sizeof(float));
      },
      kGrain);
}

void CpuOps::copy_to_host(const ExecContext& ctx, const Tensor& src, Tensor& host_dst) {
  traced_copy(ctx, "memcpy.dtoh", src, host_dst);
}

void CpuOps::copy_from_host(const ExecContext& ctx, const Tensor& host_src, Tensor& dst) {
  traced_copy(ctx, "memcpy.htod", host_src, dst);
}

}  // namespace tunescope::cpu
