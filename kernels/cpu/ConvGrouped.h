// Grouped and depthwise convolution (ConvProblem::groups > 1), the three passes of
// `direct` for such problems: each output channel correlates only its group's input
// channels, a loop nest per (channel, tap) over the valid output rows and columns, so
// no padded copy is needed and the innermost loop runs along a row (vectorised by the
// compiler where the layout makes it contiguous). Parallel over images x groups
// (forward, backward data: each writes its own channels) or output channels (backward
// filter: each sums over the batch itself), so the result does not depend on the pool.
#pragma once

#include "core/base/ConvProblem.h"
#include "core/base/Tensor.h"
#include "core/base/ThreadPool.h"

namespace tunescope::cpu {

void grouped_conv_forward(const ConvProblem& p, ThreadPool& pool, const Tensor& x, const Tensor& w,
                          Tensor& y);
void grouped_conv_backward_data(const ConvProblem& p, ThreadPool& pool, const Tensor& dy,
                                const Tensor& w, Tensor& dx);
void grouped_conv_backward_filter(const ConvProblem& p, ThreadPool& pool, const Tensor& x,
                                  const Tensor& dy, Tensor& dw);

}  // namespace tunescope::cpu
