// SGD with momentum and weight decay on the CPU: one fused elementwise pass over the
// weight, its gradient and its velocity (layout-independent).
#include "core/base/Error.h"
#include "kernels/cpu/CpuOps.h"
#include "kernels/cpu/CpuOpsSupport.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {

using namespace ops;

void CpuOps::sgd_update(const ExecContext& ctx, const SgdParams& params, Tensor& weight,
                        const Tensor& grad, Tensor& velocity) {
  check_elementwise("sgd", {{"weight", &weight}, {"grad", &grad}, {"velocity", &velocity}});
  // Reads weight, grad and velocity; writes weight and velocity.
  profiler::KernelScope scope(ctx.tracer, "sgd", ctx.device, ctx.lane, 5.0 * weight.size(),
                              5.0 * weight.bytes());
  float* w = weight.data();
  const float* g = grad.data();
  float* v = velocity.data();
  const float lr = params.learning_rate, momentum = params.momentum, decay = params.weight_decay;
  ctx.pool.parallel_for(
      weight.size(),
      [=](int64_t first, int64_t last) {
        for (int64_t i = first; i < last; ++i) {
          v[i] = momentum * v[i] + (g[i] + decay * w[i]);
          w[i] -= lr * v[i];
        }
      },
      kElementGrain);
}

}  // namespace tunescope::cpu
