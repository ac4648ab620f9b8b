// What max pooling (PoolingCpu.cpp) hands its per-instruction-set kernels (PoolingKernels.h):
// plain pointers and sizes, so nothing with external linkage crosses into code compiled for
// another instruction set, and the three kernel tables they export.
//
// The kernels cover "tiled" windows, the common case of a stride equal to the kernel and
// no padding: every input belongs to at most one window, so backward writes each element
// of dx once (dy where the input is its window's first maximum, else 0) and needs neither
// a zero fill nor an arg-max buffer. Rows and columns past the last window get 0. One call
// is one row of output windows: rows of `in_w` floats in NCHW (one channel plane), rows of
// `in_w` pixels of `c` channels in NHWC. The window's inputs are visited rows then
// columns with a strict >, so the first maximum wins ties, as in the general loops.
#pragma once

#include <cstdint>

namespace tunescope::cpu {

struct PoolingKernelTable {
  // y[ow] = max over the window of output ow; x: the plane's first row of this window row.
  void (*max_tiled_forward_planar)(const float* x, int64_t in_w, int64_t kh, int64_t kw, float* y,
                                   int64_t out_w);
  // The kh rows of dx under this window row (and their columns past out_w * kw).
  void (*max_tiled_backward_planar)(const float* x, const float* dy, float* dx, int64_t in_w,
                                    int64_t kh, int64_t kw, int64_t out_w);
  // NHWC: x the image's first pixel row of this window row, y the out_w output pixels.
  void (*max_tiled_forward_pixels)(const float* x, int64_t in_w, int64_t c, int64_t kh, int64_t kw,
                                   float* y, int64_t out_w);
  void (*max_tiled_backward_pixels)(const float* x, const float* dy, float* dx, int64_t in_w,
                                    int64_t c, int64_t kh, int64_t kw, int64_t out_w);
};

extern const PoolingKernelTable kPoolingScalarKernels;
extern const PoolingKernelTable kPoolingAvx2Kernels;
extern const PoolingKernelTable kPoolingAvx512Kernels;

}  // namespace tunescope::cpu
