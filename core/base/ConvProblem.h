// One 2-D convolution, float32: the key of every per-layer measurement and of the
// tuning cache. Filters are logical (k = out_channels, c, r = kernel_h, s = kernel_w)
// and stored in the problem's layout (NCHW -> KCRS, NHWC -> KRSC). With groups > 1 the
// channels split into that many groups, output channel k seeing only the input channels
// of its group (k / (K / groups)): the filter's c is then input.c / groups, as in ONNX
// and PyTorch (groups = input.c: depthwise).
#pragma once

#include <cstdint>
#include <string>

#include "core/base/Layout.h"
#include "core/base/Shape4.h"

namespace tunescope {

struct ConvProblem {
  Shape4 input;
  int64_t out_channels = 1;
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t pad_h = 0;
  int64_t pad_w = 0;
  Layout layout = Layout::NCHW;
  int64_t groups = 1;

  Shape4 output() const;
  Shape4 filter() const { return {out_channels, input.c / groups, kernel_h, kernel_w}; }
  // Multiply-adds x 2 of the forward pass; backward-data and backward-filter cost the same.
  double flops() const;
  // Bytes one pass must move at least: its three float tensors (input, filter and output,
  // or their gradients) once each, read or written.
  double min_bytes() const;
  // Stable text key, e.g. "n128c3h32w32_k16r3s3_u1v1_p1q1_nchw_f32"; "_g<groups>" before
  // "_f32" only when groups > 1, so ungrouped keys stay what results DBs hold.
  std::string key() const;
  // Throws Error(usage) naming the field when sizes are non-positive or the output is empty.
  void validate() const;
  bool operator==(const ConvProblem&) const = default;
};

}  // namespace tunescope
