// im2col / col2im of one image in either layout, shared by every pass of the gemm
// algorithm. The column matrix orders its taps like the filter's physical layout, so
// the filter multiplies it without reordering:
//   NCHW: col is (C*R*S) x (P*Q), rows (c, r, s), columns (p, q)  -> y = W * col
//   NHWC: col is (P*Q) x (R*S*C), rows (p, q), columns (r, s, c)  -> y = col * W^T
#pragma once

#include "core/base/ConvProblem.h"

namespace tunescope::cpu {

// Elements of one image's column matrix.
int64_t col_elements(const ConvProblem& problem);

// True when the column matrix of an image is the image itself (1x1, stride 1, no
// padding), so im2col and col2im can be skipped.
bool col_is_identity(const ConvProblem& problem);

// image: one input image in problem.layout (C*H*W floats); col: col_elements floats.
// Padding taps become zeros.
void im2col(const ConvProblem& problem, const float* image, float* col);

// Overwrites image with the sum of every column entry that maps onto each pixel (the
// adjoint of im2col); taps that fall into the padding are dropped.
void col2im(const ConvProblem& problem, const float* col, float* image);

}  // namespace tunescope::cpu
