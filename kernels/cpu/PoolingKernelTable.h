// What max pooling (PoolingCpu.cpp) hands its per-instruction-set kernels (PoolingKernels.h):
// plain pointers and sizes, so nothing with external linkage crosses into code compiled for
// another instruction set, and the three kernel tables they export.
//
// The kernels cover "tiled" windows, the common case of a stride equal to the kernel and
// no padding: every input belongs to at most one window, so backward writes each element
// of dx once (dy where the input is its window's first maximum, else 0) and needs neither
// a zero fill nor an arg-max buffer. Rows and columns past the last window get 0. A planar
// call (NCHW) runs `rows` rows of output windows of one channel plane, its rows `in_w`
// floats apart (a call per row cost as much as LeNet-5's rows of 14 and 5 outputs); a
// pixel call (NHWC) one row of windows over rows of `in_w` pixels of `c` channels. The
// window's inputs are visited rows then columns with a strict >, so the first maximum wins
// ties, as in the general loops.
//
// The bias_relu_max entries are the fused y = maxpool(relu(x + bias)) over the same tiled
// windows (LeNet-5's conv bias, ReLU and pool in one pass): each input is compared as
// x + bias, y = relu of the window's maximum, and backward writes dy to the window's first
// maximum of x + bias where y > 0, 0 to every other input. That is the unfused ops' result
// bit for bit: their arg-max over relu(x + bias) is that same input whenever y > 0, and
// relu.bwd zeroes the rest.
#pragma once

#include <cstdint>

namespace tunescope::cpu {

inline constexpr int64_t kPoolBiasRun = 16;  // the widest vector's lanes

struct PoolingKernelTable {
  // y[i * out_w + ow] = max over the window of output ow of window row i < rows; x: the
  // plane's first row of window row 0.
  void (*max_tiled_forward_planar)(const float* x, int64_t in_w, int64_t kh, int64_t kw, float* y,
                                   int64_t out_w, int64_t rows);
  // The kh rows of dx under each of the `rows` window rows (and their columns past out_w * kw).
  void (*max_tiled_backward_planar)(const float* x, const float* dy, float* dx, int64_t in_w,
                                    int64_t kh, int64_t kw, int64_t out_w, int64_t rows);
  // NHWC: x the image's first pixel row of this window row, y the out_w output pixels.
  void (*max_tiled_forward_pixels)(const float* x, int64_t in_w, int64_t c, int64_t kh, int64_t kw,
                                   float* y, int64_t out_w);
  void (*max_tiled_backward_pixels)(const float* x, const float* dy, float* dx, int64_t in_w,
                                    int64_t c, int64_t kh, int64_t kw, int64_t out_w);

  // Fused: planar rows take the plane's channel bias; pixel rows the c biases repeated,
  // bias[i] = bias[i % c] for i < c + kPoolBiasRun (a vector of up to kPoolBiasRun lanes
  // that runs on into the next pixels reads their channels' biases).
  void (*bias_relu_max_forward_planar)(const float* x, float bias, int64_t in_w, int64_t kh,
                                       int64_t kw, float* y, int64_t out_w, int64_t rows);
  void (*bias_relu_max_backward_planar)(const float* x, float bias, const float* dy, float* dx,
                                        int64_t in_w, int64_t kh, int64_t kw, int64_t out_w,
                                        int64_t rows);
  void (*bias_relu_max_forward_pixels)(const float* x, const float* bias, int64_t in_w, int64_t c,
                                       int64_t kh, int64_t kw, float* y, int64_t out_w);
  void (*bias_relu_max_backward_pixels)(const float* x, const float* bias, const float* dy,
                                        float* dx, int64_t in_w, int64_t c, int64_t kh, int64_t kw,
                                        int64_t out_w);
  // The fused op's bias gradient share of `pixels` outputs of c channels (planar: c = 1):
  // sums[ch] += the sum of dy where y > 0, in double.
  void (*passed_sums)(const float* y, const float* dy, int64_t pixels, int64_t c, double* sums);

  // Fused, NCHW 2 x 2 windows over whole planes (in_h == 2 out_h, in_w == 2 out_w) whose
  // rows are too short for the planar vectors: `planes` consecutive planes, plane i of
  // channel (first_channel + i) % channels, as one run of vectors across rows and planes.
  // Only where out_w <= flat_forward_max_out_w / flat_backward_max_out_w (0: none on this
  // instruction set): where they beat the planar vectors (docs/BENCHMARKS.md).
  void (*bias_relu_max2_forward_planes)(const float* x, const float* bias, int64_t channels,
                                        int64_t first_channel, int64_t planes, int64_t out_h,
                                        int64_t out_w, float* y) = nullptr;
  void (*bias_relu_max2_backward_planes)(const float* x, const float* bias, int64_t channels,
                                         int64_t first_channel, int64_t planes, int64_t out_h,
                                         int64_t out_w, const float* dy, float* dx) = nullptr;
  int64_t flat_forward_max_out_w = 0, flat_backward_max_out_w = 0;
};

extern const PoolingKernelTable kPoolingScalarKernels;
extern const PoolingKernelTable kPoolingAvx2Kernels;
extern const PoolingKernelTable kPoolingAvx512Kernels;

}  // namespace tunescope::cpu
