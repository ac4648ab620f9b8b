// ReLU on the CPU: elementwise, so one flat loop serves both layouts, on the vector
// kernels of ElementwiseIsa.h.
#include "core/base/Error.h"
#include "kernels/cpu/CpuOps.h"
#include "kernels/cpu/CpuOpsSupport.h"
#include "kernels/cpu/ElementwiseIsa.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {

using namespace ops;

void CpuOps::relu_forward(const ExecContext& ctx, const Tensor& x, Tensor& y) {
  check_elementwise("relu.fwd", {{"x", &x}, {"y", &y}});
  profiler::KernelScope scope(ctx.tracer, "relu.fwd", ctx.device, ctx.lane, 1.0 * x.size(),
                              2.0 * x.bytes());
  const float* xd = x.data();
  float* yd = y.data();
  const auto kernel = elementwise_kernels().relu_forward;  // keeps NaN
  ctx.pool.parallel_for(
      x.size(), [=](int64_t first, int64_t last) { kernel(xd + first, yd + first, last - first); },
      kElementGrain);
}

void CpuOps::relu_backward(const ExecContext& ctx, const Tensor& y, const Tensor& dy, Tensor& dx) {
  check_elementwise("relu.bwd", {{"y", &y}, {"dy", &dy}, {"dx", &dx}});
  profiler::KernelScope scope(ctx.tracer, "relu.bwd", ctx.device, ctx.lane, 1.0 * y.size(),
                              3.0 * y.bytes());
  const float* yd = y.data();
  const float* dyd = dy.data();
  float* dxd = dx.data();
  // Branch-free: the sign of y is random, and a branch on it mispredicted half the time.
  const auto kernel = elementwise_kernels().relu_backward;
  ctx.pool.parallel_for(
      y.size(),
      [=](int64_t first, int64_t last) {
        kernel(yd + first, dyd + first, dxd + first, last - first);
      },
      kElementGrain);
}

}  // namespace tunescope::cpu
