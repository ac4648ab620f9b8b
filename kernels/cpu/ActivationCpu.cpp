// ReLU on the CPU: elementwise, so one flat loop serves both layouts.
#include "core/base/Error.h"
#include "kernels/cpu/CpuOps.h"
#include "kernels/cpu/CpuOpsSupport.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {

using namespace ops;

void CpuOps::relu_forward(const ExecContext& ctx, const Tensor& x, Tensor& y) {
  check_elementwise("relu.fwd", {{"x", &x}, {"y", &y}});
  profiler::KernelScope scope(ctx.tracer, "relu.fwd", ctx.device, ctx.lane, 1.0 * x.size(),
                              2.0 * x.bytes());
  const float* xd = x.data();
  float* yd = y.data();
  ctx.pool.parallel_for(x.size(), [=](int64_t first, int64_t last) {
    // !(x <= 0) keeps NaN, so a diverging run shows up as a NaN loss instead of
    // being silently clamped to 0 here.
    for (int64_t i = first; i < last; ++i) yd[i] = !(xd[i] <= 0.0f) ? xd[i] : 0.0f;
  }, kElementGrain);
}

void CpuOps::relu_backward(const ExecContext& ctx, const Tensor& y, const Tensor& dy, Tensor& dx) {
  check_elementwise("relu.bwd", {{"y", &y}, {"dy", &dy}, {"dx", &dx}});
  profiler::KernelScope scope(ctx.tracer, "relu.bwd", ctx.device, ctx.lane, 1.0 * y.size(),
                              3.0 * y.bytes());
  const float* yd = y.data();
  const float* dyd = dy.data();
  float* dxd = dx.data();
  ctx.pool.parallel_for(y.size(), [=](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) dxd[i] = yd[i] > 0.0f ? dyd[i] : 0.0f;
  }, kElementGrain);
}

}  // namespace tunescope::cpu
