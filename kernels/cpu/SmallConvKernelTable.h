// What the few-channel direct convolution (ConvDirectSmall.cpp) hands its per-instruction-set
// kernels (SmallConvKernels.h): one image's pass at stride 1 on buffers the algorithm has
// already padded and repacked, as plain pointers and sizes, and the three kernel tables.
#pragma once

#include <cstdint>

namespace tunescope::cpu {

// Filters are used in blocks of this many output (forward, backward filter) or input
// (backward data) channels, zero-filled past the last channel.
inline constexpr int64_t kSmallConvBlock = 8;
// Rows of dy are copied zero-padded to a multiple of this for backward filter, and every
// buffer the kernels read has this many floats of zeros after it.
inline constexpr int64_t kSmallConvSlack = 16;

struct SmallConvImage {
  int64_t c = 0, k = 0, r = 0, s = 0;
  int64_t in_h = 0, in_w = 0;  // the input plane with its padding included
  int64_t out_h = 0, out_w = 0;
};

struct SmallConvKernelTable {
  // y[k][oh][ow] = sum over c, r, s of x[c][oh + r][ow + s] * w[k][c][r][s], with the
  // filter repacked as wk[k / 8][c][r][s][k % 8].
  void (*forward)(const SmallConvImage& g, const float* x, const float* wk, float* y);
  // dw[k][c][r][s] += sum over oh, ow of dy[k][oh][ow] * x[c][oh + r][ow + s], with dy
  // given as dyz[k][oh][0 .. round_up(out_w, 16)) zero past out_w and past the last k of
  // its block.
  void (*backward_filter)(const SmallConvImage& g, const float* x, const float* dyz, float* dw);
  // dx[c][ih][iw] (the padded input plane) = sum over k, r, s of
  // dyp[k][ih - r + R - 1][iw - s + S - 1] * w[k][c][r][s], with dy given as dyp, padded
  // with R - 1 rows and S - 1 columns of zeros on every side, and the filter repacked as
  // wc[c / 8][k][r][s][c % 8].
  void (*backward_data)(const SmallConvImage& g, const float* dyp, const float* wc, float* dx);
};

extern const SmallConvKernelTable kSmallConvScalarKernels;
extern const SmallConvKernelTable kSmallConvAvx2Kernels;
extern const SmallConvKernelTable kSmallConvAvx512Kernels;

}  // namespace tunescope::cpu
