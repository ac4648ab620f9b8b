#include "core/base/Error.h"
#include "core/base/OpKernels.h"

namespace tunescope {

Shape4 PoolParams::output(const Shape4& input) const {
  if (kernel_h <= 0 || kernel_w <= 0 || stride_h <= 0 || stride_w <= 0 || pad_h < 0 || pad_w < 0 ||
      input.h + 2 * pad_h < kernel_h || input.w + 2 * pad_w < kernel_w)
    fail(ErrorKind::usage, "pooling ", kernel_h, "x", kernel_w, " stride ", stride_h, "x", stride_w,
         " pad ", pad_h, "x", pad_w, " does not fit input ", input.str());
  return {input.n, input.c, (input.h + 2 * pad_h - kernel_h) / stride_h + 1,
          (input.w + 2 * pad_w - kernel_w) / stride_w + 1};
}

}  // namespace tunescope
