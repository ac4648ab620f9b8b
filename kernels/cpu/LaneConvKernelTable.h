// What the batch-lane direct convolution (ConvDirectLanes.cpp) hands its per-instruction-set
// kernels (LaneConvKernels.h): sixteen images at a time, transposed so that each pixel of
// each channel holds the sixteen images' values side by side ([channel][h][w][lane]).
// Every vector then carries useful work whatever the channel counts and row widths, which
// is where few channels (LeNet-5: 6 and 16) and short rows (10) waste lanes otherwise.
#pragma once

#include <cstdint>

namespace tunescope::cpu {

// Images per block: the lane dimension of every transposed buffer, whatever the kernel
// path (AVX2 runs a block as two halves, scalar as sixteen lanes).
inline constexpr int64_t kLaneBlock = 16;
// The widest filter scatter_data takes (its register tile is sized by the filter width).
inline constexpr int64_t kLaneScatterMaxColumns = 7;

// One correlation at stride 1: out[k][oh][ow][l] = sum over c, r, s of
// in[c][oh + r][ow + s][l] * w[c][r][s][k]; in_h, in_w include any padding. Input rows
// outside [rows_begin, rows_end) and columns outside [cols_begin, cols_end) are zero
// padding: the kernels skip the products they would add (backward data's padding is
// R - 1 rows on each side, and skipping it saves about a third of its work).
struct LaneConvImage {
  int64_t c = 0, k = 0, r = 0, s = 0;
  int64_t in_h = 0, in_w = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t rows_begin = 0, rows_end = 0, cols_begin = 0, cols_end = 0;
};

struct LaneConvKernelTable {
  // out = the correlation above, written (not added); w as wt[c][r][s][k].
  void (*correlate)(const LaneConvImage& g, const float* in, const float* wt, float* out);
  // dw[k][c][r][s] += sum over lanes, oh, ow of dy[k][oh][ow][l] * x[c][oh + r][ow + s][l].
  void (*filter_gradient)(const LaneConvImage& g, const float* x, const float* dy, float* dw);
  // Backward data without padding, by scattering each dy value into the dx values it
  // reaches (all of its products are useful, where the correlation on padded dy wastes the
  // padding's): dx[c][oh + r][ow + s][l] += sum over k of dy[k][oh][ow][l] * w[k][c][r][s],
  // with w as wt[c][r][k][s]; g is the forward geometry (in: dx, out: dy), dx zeroed by the
  // caller, g.s at most kLaneScatterMaxColumns.
  void (*scatter_data)(const LaneConvImage& g, const float* dy, const float* wt, float* dx);
  // Transposes between images and a block's lanes, for runs of len contiguous floats of each
  // image (an NCHW plane or row): block[p][l] = image_l[p] for l < images (lanes past that
  // are zeroed), p < len, where image_l = src + l * image_stride; and back.
  void (*to_lanes)(const float* src, int64_t image_stride, int64_t images, int64_t len,
                   float* block);
  void (*from_lanes)(const float* block, int64_t len, int64_t images, float* dst,
                     int64_t image_stride);
};

extern const LaneConvKernelTable kLaneConvScalarKernels;
extern const LaneConvKernelTable kLaneConvAvx2Kernels;
extern const LaneConvKernelTable kLaneConvAvx512Kernels;

}  // namespace tunescope::cpu
