// The batch-lane direct convolution's kernels (LaneConvKernelTable.h), written once over
// vectors of W lanes (images) and compiled once per instruction set
// (LaneConv{Scalar,Avx2,Avx512}.cpp, each with its own -march). A register tile holds KB
// output channels x T neighbouring outputs of a row: each input vector loaded feeds KB
// multiply-adds and each filter value is broadcast once per tile, so the loops are bound
// by multiply-adds. Internal linkage throughout, as in ElementwiseKernels.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/ElementwiseKernels.h"
#include "kernels/cpu/LaneConvKernelTable.h"

namespace tunescope::cpu {
namespace {

// Tile sizes per path: KB x T accumulators plus KB broadcasts and one input must fit the
// registers (32 vector registers with AVX-512, 16 with AVX2 and SSE).
template <int W>
struct LaneTiles {
  static constexpr int channels = W == 16 ? 4 : (W == 8 ? 4 : 2);
  static constexpr int outputs = W == 16 ? 5 : (W == 8 ? 2 : 4);
};

template <int N>
using LaneCount = std::integral_constant<int, N>;

// f(LaneCount<B>, k0) over [0, k) in blocks of B channels: B = KB, or 3 where KB does not
// divide k and 3 does (LeNet-5's 6 channels), and single channels for what is left.
template <int KB, class F>
void lc_channel_blocks(int64_t k, const F& f) {
  int64_t k0 = 0;
  if constexpr (KB >= 3) {
    if (k % KB != 0 && k % 3 == 0) {
      for (; k0 < k; k0 += 3) f(LaneCount<3>{}, k0);
      return;
    }
  }
  for (; k0 + KB <= k; k0 += KB) f(LaneCount<KB>{}, k0);
  for (; k0 < k; ++k0) f(LaneCount<1>{}, k0);
}

template <int W>
inline float lc_lane_sum(typename Ew<W>::V v) {
  if constexpr (W == 1) {
    return v;
  } else {
    float sum = 0.0f;
    for (int j = 0; j < W; ++j) sum += v[j];
    return sum;
  }
}

// Output channels [k0, k0 + KB) of every row, lanes [lane, lane + W), in tiles of T
// outputs (the last tile of a row moved back to end at its end: it rewrites the same
// values); rows shorter than T are the caller's (T = 1).
template <int W, int KB, int T>
void lc_correlate_channels(const LaneConvImage& g, const float* in, const float* wt, float* out,
                           int64_t lane, int64_t k0) {
  using E = Ew<W>;
  using Vec = typename E::V;
  constexpr int64_t L = kLaneBlock;
  const auto tile = [&](int64_t oh, int64_t ow) {
    Vec acc[KB][T];
    for (int b = 0; b < KB; ++b)
      for (int t = 0; t < T; ++t) acc[b][t] = E::splat(0.0f);
    const int64_t r0 = std::max<int64_t>(0, g.rows_begin - oh), r1 = std::min(g.r, g.rows_end - oh);
    const int64_t s0 = std::max<int64_t>(0, g.cols_begin - (ow + T - 1)),
                  s1 = std::min(g.s, g.cols_end - ow);
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t r = r0; r < r1; ++r) {
        const float* xr = in + ((c * g.in_h + oh + r) * g.in_w + ow) * L + lane;
        const float* wr = wt + (c * g.r + r) * g.s * g.k + k0;
        for (int64_t s = s0; s < s1; ++s) {
          Vec wv[KB];
          for (int b = 0; b < KB; ++b) wv[b] = E::splat(wr[s * g.k + b]);
          for (int t = 0; t < T; ++t) {
            const Vec xv = E::load(xr + (t + s) * L);
            for (int b = 0; b < KB; ++b) acc[b][t] += wv[b] * xv;
          }
        }
      }
    for (int b = 0; b < KB; ++b)
      for (int t = 0; t < T; ++t)
        ew_store(out + (((k0 + b) * g.out_h + oh) * g.out_w + ow + t) * L + lane, acc[b][t]);
  };
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    int64_t ow = 0;
    for (; ow + T <= g.out_w; ow += T) tile(oh, ow);
    if (ow < g.out_w) tile(oh, g.out_w - T);
  }
}

template <int W>
void lc_correlate(const LaneConvImage& g, const float* in, const float* wt, float* out) {
  constexpr int T = LaneTiles<W>::outputs;
  for (int64_t lane = 0; lane < kLaneBlock; lane += W)
    lc_channel_blocks<LaneTiles<W>::channels>(g.k, [&](auto blocks, int64_t k0) {
      constexpr int KB = decltype(blocks)::value;
      if (g.out_w >= T)
        lc_correlate_channels<W, KB, T>(g, in, wt, out, lane, k0);
      else
        lc_correlate_channels<W, KB, 1>(g, in, wt, out, lane, k0);
    });
}

// dw for output channels [k0, k0 + KB), input channel c, filter row r and filter columns
// [s0, s0 + TS), summed over lanes [lane, lane + W) and every output.
template <int W, int KB, int TS>
void lc_filter_tile(const LaneConvImage& g, const float* x, const float* dy, float* dw,
                    int64_t lane, int64_t k0, int64_t c, int64_t r, int64_t s0) {
  using E = Ew<W>;
  using Vec = typename E::V;
  constexpr int64_t L = kLaneBlock;
  const int64_t plane = g.out_h * g.out_w * L;
  Vec acc[KB][TS];
  for (int b = 0; b < KB; ++b)
    for (int t = 0; t < TS; ++t) acc[b][t] = E::splat(0.0f);
  const int64_t oh0 = std::max<int64_t>(0, g.rows_begin - r),
                oh1 = std::min(g.out_h, g.rows_end - r);
  const int64_t ow0 = std::max<int64_t>(0, g.cols_begin - (s0 + TS - 1)),
                ow1 = std::min(g.out_w, g.cols_end - s0);
  for (int64_t oh = oh0; oh < oh1; ++oh) {
    const float* xr = x + ((c * g.in_h + oh + r) * g.in_w + s0) * L + lane;
    const float* dr = dy + (k0 * g.out_h + oh) * g.out_w * L + lane;
    for (int64_t ow = ow0; ow < ow1; ++ow) {
      Vec dv[KB];
      for (int b = 0; b < KB; ++b) dv[b] = E::load(dr + b * plane + ow * L);
      for (int t = 0; t < TS; ++t) {
        const Vec xv = E::load(xr + (ow + t) * L);
        for (int b = 0; b < KB; ++b) acc[b][t] += dv[b] * xv;
      }
    }
  }
  for (int b = 0; b < KB; ++b)
    for (int t = 0; t < TS; ++t)
      dw[(((k0 + b) * g.c + c) * g.r + r) * g.s + s0 + t] += lc_lane_sum<W>(acc[b][t]);
}

template <int W>
void lc_filter_gradient(const LaneConvImage& g, const float* x, const float* dy, float* dw) {
  constexpr int TS = LaneTiles<W>::outputs;
  for (int64_t lane = 0; lane < kLaneBlock; lane += W)
    lc_channel_blocks<LaneTiles<W>::channels>(g.k, [&](auto blocks, int64_t k0) {
      constexpr int KB = decltype(blocks)::value;
      for (int64_t c = 0; c < g.c; ++c)
        for (int64_t r = 0; r < g.r; ++r) {
          int64_t s0 = 0;
          for (; s0 + TS <= g.s; s0 += TS)
            lc_filter_tile<W, KB, TS>(g, x, dy, dw, lane, k0, c, r, s0);
          for (; s0 < g.s; ++s0) lc_filter_tile<W, KB, 1>(g, x, dy, dw, lane, k0, c, r, s0);
        }
    });
}

// dx row oh + r, columns [ow0, ow0 + T + S - 1), of channel c from dy row oh, columns
// [ow0, ow0 + T), over every k.
template <int W, int S, int T>
void lc_scatter_tile(const LaneConvImage& g, const float* dy, const float* wt, float* dx,
                     int64_t lane, int64_t c, int64_t r, int64_t oh, int64_t ow0) {
  using E = Ew<W>;
  using Vec = typename E::V;
  constexpr int64_t L = kLaneBlock;
  const int64_t plane = g.out_h * g.out_w * L;
  const float* wr = wt + (c * g.r + r) * g.k * S;
  const float* dr = dy + (oh * g.out_w + ow0) * L + lane;
  Vec acc[T + S - 1];
  for (int j = 0; j < T + S - 1; ++j) acc[j] = E::splat(0.0f);
  for (int64_t k = 0; k < g.k; ++k) {
    Vec d[T];
    for (int t = 0; t < T; ++t) d[t] = E::load(dr + k * plane + t * L);
    for (int s = 0; s < S; ++s) {
      const Vec wv = E::splat(wr[k * S + s]);
      for (int t = 0; t < T; ++t) acc[t + s] += wv * d[t];
    }
  }
  float* xr = dx + ((c * g.in_h + oh + r) * g.in_w + ow0) * L + lane;
  for (int j = 0; j < T + S - 1; ++j) ew_store(xr + j * L, E::load(xr + j * L) + acc[j]);
}

template <int W, int S>
void lc_scatter_columns(const LaneConvImage& g, const float* dy, const float* wt, float* dx) {
  constexpr int T = LaneTiles<W>::outputs;
  for (int64_t lane = 0; lane < kLaneBlock; lane += W)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t r = 0; r < g.r; ++r)
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          int64_t ow = 0;
          for (; ow + T <= g.out_w; ow += T)
            lc_scatter_tile<W, S, T>(g, dy, wt, dx, lane, c, r, oh, ow);
          for (; ow < g.out_w; ++ow) lc_scatter_tile<W, S, 1>(g, dy, wt, dx, lane, c, r, oh, ow);
        }
}

template <int W>
void lc_scatter_data(const LaneConvImage& g, const float* dy, const float* wt, float* dx) {
  switch (g.s) {
    case 1: lc_scatter_columns<W, 1>(g, dy, wt, dx); break;
    case 2: lc_scatter_columns<W, 2>(g, dy, wt, dx); break;
    case 3: lc_scatter_columns<W, 3>(g, dy, wt, dx); break;
    case 4: lc_scatter_columns<W, 4>(g, dy, wt, dx); break;
    case 5: lc_scatter_columns<W, 5>(g, dy, wt, dx); break;
    case 6: lc_scatter_columns<W, 6>(g, dy, wt, dx); break;
    case 7: lc_scatter_columns<W, 7>(g, dy, wt, dx); break;
    default: break;  // the caller takes the correlation past kLaneScatterMaxColumns
  }
}

// 8 x 8 floats transposed in registers (three rounds of pairwise shuffles): r[i][j] -> r[j][i].
inline void lc_transpose8(typename Ew<8>::V* r) {
  using V = typename Ew<8>::V;
  V t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int i = 0; i < 8; i += 4)
    for (int j = 0; j < 2; ++j) {
      u[i + 2 * j] = __builtin_shufflevector(t[i + j], t[i + j + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + 2 * j + 1] =
          __builtin_shufflevector(t[i + j], t[i + j + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (int j = 0; j < 4; ++j) {
    r[j] = __builtin_shufflevector(u[j], u[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    r[j + 4] = __builtin_shufflevector(u[j], u[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

// Runs of 8 floats of 8 images at a time, the last run moved back to end at len (it
// rewrites the same values); runs shorter than 8, and the scalar path, one float at a time.
template <int W>
void lc_to_lanes(const float* src, int64_t image_stride, int64_t images, int64_t len,
                 float* block) {
  using E = Ew<8>;
  constexpr int64_t L = kLaneBlock;
  if (W == 1 || len < 8) {
    for (int64_t p = 0; p < len; ++p)
      for (int64_t l = 0; l < L; ++l)
        block[p * L + l] = l < images ? src[l * image_stride + p] : 0.0f;
    return;
  }
  if constexpr (W > 1)
    for (int64_t p0 = 0; p0 < len; p0 += 8) {
      const int64_t p = std::min(p0, len - 8);
      for (int64_t half = 0; half < L; half += 8) {
        E::V r[8];
        for (int64_t i = 0; i < 8; ++i)
          r[i] = half + i < images ? E::load(src + (half + i) * image_stride + p) : E::splat(0.0f);
        lc_transpose8(r);
        for (int64_t i = 0; i < 8; ++i) ew_store(block + (p + i) * L + half, r[i]);
      }
    }
}

template <int W>
void lc_from_lanes(const float* block, int64_t len, int64_t images, float* dst,
                   int64_t image_stride) {
  using E = Ew<8>;
  constexpr int64_t L = kLaneBlock;
  if (W == 1 || len < 8) {
    for (int64_t l = 0; l < images; ++l)
      for (int64_t p = 0; p < len; ++p) dst[l * image_stride + p] = block[p * L + l];
    return;
  }
  if constexpr (W > 1)
    for (int64_t p0 = 0; p0 < len; p0 += 8) {
      const int64_t p = std::min(p0, len - 8);
      for (int64_t half = 0; half < images; half += 8) {
        E::V r[8];
        for (int64_t i = 0; i < 8; ++i) r[i] = E::load(block + (p + i) * L + half);
        lc_transpose8(r);
        for (int64_t i = 0; i < 8 && half + i < images; ++i)
          ew_store(dst + (half + i) * image_stride + p, r[i]);
      }
    }
}

template <int W>
LaneConvKernelTable lane_conv_kernel_table() {
  LaneConvKernelTable table;
  table.correlate = lc_correlate<W>;
  table.filter_gradient = lc_filter_gradient<W>;
  table.scatter_data = lc_scatter_data<W>;
  table.to_lanes = lc_to_lanes<W>;
  table.from_lanes = lc_from_lanes<W>;
  return table;
}

}  // namespace
}  // namespace tunescope::cpu
