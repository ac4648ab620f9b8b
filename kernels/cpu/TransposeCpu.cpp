// The traced layout conversion of the CPU backend: wraps convert_layout, the one
// conversion routine of the code base, on the lane's pool.
#include "core/base/Error.h"
#include "kernels/cpu/CpuOps.h"
#include "kernels/cpu/CpuOpsSupport.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {

using namespace ops;

void CpuOps::transpose(const ExecContext& ctx, const Tensor& x, Tensor& y) {
  check_transpose(x, y);
  const char* name =
      x.layout() == Layout::NCHW ? "transpose.nchw_to_nhwc" : "transpose.nhwc_to_nchw";
  profiler::KernelScope scope(ctx.tracer, name, ctx.device, ctx.lane, 0.0,
                              static_cast<double>(x.bytes() + y.bytes()));
  convert_layout(x, y, &ctx.pool);
}

}  // namespace tunescope::cpu
