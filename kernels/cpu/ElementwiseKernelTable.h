// What the CPU's elementwise and batch-norm ops (ActivationCpu.cpp, ElementwiseCpu.cpp,
// BatchNormCpu.cpp) hand their per-instruction-set kernels (ElementwiseKernels.h): plain
// pointers and sizes, so nothing with external linkage crosses into code compiled for
// another instruction set, and the three kernel tables they export.
//
// The per-channel kernels work on a `ChannelRun`: `rows` rows of `length` contiguous
// floats. In NHWC a row is one pixel's channels and position j of a row is channel
// channel0 + j; in NCHW a run is (part of) one channel plane, rows = 1, and the one
// channel's parameters are broadcast along it.
#pragma once

#include <cstdint>

namespace tunescope::cpu {

struct ChannelRun {
  int64_t rows = 1;
  int64_t length = 0;
  bool broadcast = false;  // true: one channel for the whole run (its parameters at [0])
};

struct ElementwiseKernelTable {
  // y = max(x, 0) keeping NaN; y may alias x.
  void (*relu_forward)(const float* x, float* y, int64_t count);
  // dx = y > 0 ? dy : 0, branch-free; dx may alias dy.
  void (*relu_backward)(const float* y, const float* dy, float* dx, int64_t count);
  // y = a + b; y may alias a or b.
  void (*add)(const float* a, const float* b, float* y, int64_t count);
  // y += x.
  void (*accumulate)(const float* x, float* y, int64_t count);

  // sum[j] += x over the run, in double (j the run position, or 0 when broadcast).
  void (*channel_sum)(const float* x, ChannelRun run, double* sum);
  // sum[j] += x, sum_sq[j] += x * x over the run, in double (j the run position, or 0 when
  // broadcast).
  void (*channel_moments)(const float* x, ChannelRun run, double* sum, double* sum_sq);
  // y = (x - center) * scale + offset [+ residual], then max(., 0) when relu; residual may
  // be null, y may alias x.
  void (*channel_affine)(const float* x, const float* residual, float* y, ChannelRun run,
                         const float* center, const float* scale, const float* offset, bool relu);
  // With g = dy, or (y > 0 ? dy : 0) when y is not null (a ReLU's output):
  // sum_g[j] += g, sum_gx[j] += g * (x - mean), in double.
  void (*channel_gradient_moments)(const float* x, const float* y, const float* dy, ChannelRun run,
                                   const float* mean, double* sum_g, double* sum_gx);
  // dx = a * g + b * (x - mean) + d with g as above; g itself into dg when dg is not null.
  // dx may alias dy.
  void (*channel_gradient_apply)(const float* x, const float* y, const float* dy, float* dx,
                                 float* dg, ChannelRun run, const float* mean, const float* a,
                                 const float* b, const float* d);
};

extern const ElementwiseKernelTable kElementwiseScalarKernels;
extern const ElementwiseKernelTable kElementwiseAvx2Kernels;
extern const ElementwiseKernelTable kElementwiseAvx512Kernels;

}  // namespace tunescope::cpu
