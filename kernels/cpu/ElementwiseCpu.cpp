// Bias, residual add, gradient accumulation, copy and zero fill on the CPU. Only the bias ops
// need a channel; the rest are flat loops that serve both layouts unchanged.
#include <algorithm>

#include "core/base/Error.h"
#include "kernels/cpu/CpuOps.h"
#include "kernels/cpu/CpuOpsSupport.h"
#include "kernels/cpu/ElementwiseIsa.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {

using namespace ops;

void CpuOps::bias_forward(const ExecContext& ctx, const Tensor& bias, Tensor& y) {
  check_per_channel("bias.fwd", "y", y, "bias", bias);
  profiler::KernelScope scope(ctx.tracer, "bias.fwd", ctx.device, ctx.lane, 1.0 * y.size(),
                              2.0 * y.bytes());
  const float* b = bias.data();
  float* yd = y.data();
  for_each_with_channel(ctx.pool, y.shape(), y.layout(),
                        [=](int64_t i, int64_t c) { yd[i] += b[c]; });
}

void CpuOps::bias_backward(const ExecContext& ctx, const Tensor& dy, Tensor& dbias) {
  check_per_channel("bias.bwd", "dy", dy, "dbias", dbias);
  profiler::KernelScope scope(ctx.tracer, "bias.bwd", ctx.device, ctx.lane, 1.0 * dy.size(),
                              static_cast<double>(dy.bytes()));
  channel_sums(ctx.pool, dy, dbias.data());
}

void CpuOps::add(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor& y) {
  check_elementwise("add", {{"a", &a}, {"b", &b}, {"y", &y}});
  profiler::KernelScope scope(ctx.tracer, "add", ctx.device, ctx.lane, 1.0 * a.size(),
                              3.0 * a.bytes());
  const float* ad = a.data();
  const float* bd = b.data();
  float* yd = y.data();
  const auto kernel = elementwise_kernels().add;
  ctx.pool.parallel_for(
      a.size(),
      [=](int64_t first, int64_t last) {
        kernel(ad + first, bd + first, yd + first, last - first);
      },
      kElementGrain);
}

void CpuOps::accumulate(const ExecContext& ctx, const Tensor& x, Tensor& y) {
  check_elementwise("accumulate", {{"x", &x}, {"y", &y}});
  profiler::KernelScope scope(ctx.tracer, "accumulate", ctx.device, ctx.lane, 1.0 * x.size(),
                              3.0 * x.bytes());
  const float* xd = x.data();
  float* yd = y.data();
  const auto kernel = elementwise_kernels().accumulate;
  ctx.pool.parallel_for(
      x.size(), [=](int64_t first, int64_t last) { kernel(xd + first, yd + first, last - first); },
      kElementGrain);
}

void CpuOps::zero(const ExecContext& ctx, Tensor& y) {
  check_present("zero", "y", y);
  profiler::KernelScope scope(ctx.tracer, "zero", ctx.device, ctx.lane, 0.0,
                              static_cast<double>(y.bytes()));
  float* yd = y.data();
  // Filling is bandwidth-bound: a larger grain than compute loops keeps threads busy
  // on whole pages.
  ctx.pool.parallel_for(
      y.size(), [=](int64_t first, int64_t last) { std::fill(yd + first, yd + last, 0.0f); },
      4 * kElementGrain);
}

void CpuOps::copy(const ExecContext& ctx, const Tensor& x, Tensor& y) {
  check_elementwise("copy", {{"x", &x}, {"y", &y}});
  profiler::KernelScope scope(ctx.tracer, "copy", ctx.device, ctx.lane, 0.0,
                              2.0 * static_cast<double>(x.bytes()));
  const float* xd = x.data();
  float* yd = y.data();
  if (xd == yd) return;
  ctx.pool.parallel_for(
      x.size(), [=](int64_t first, int64_t last) { std::copy(xd + first, xd + last, yd + first); },
      4 * kElementGrain);
}

}  // namespace tunescope::cpu
