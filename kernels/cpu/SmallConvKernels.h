// The few-channel direct convolution's kernels (SmallConvKernelTable.h), written once over
// vectors of W floats along an output (or, backward data, input) row and compiled once per
// instruction set (SmallConv{Scalar,Avx2,Avx512}.cpp, each with its own -march). A vector
// of the row is loaded once per filter tap and multiplied into a block of eight channels'
// accumulators, so with few channels the loop is bound by multiply-adds, not by loads, and
// no column matrix is built. Internal linkage throughout, as in ElementwiseKernels.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/ElementwiseKernels.h"
#include "kernels/cpu/SmallConvKernelTable.h"

namespace tunescope::cpu {
namespace {

inline int64_t sc_blocks(int64_t n) { return (n + kSmallConvBlock - 1) / kSmallConvBlock; }

// f(width, at) over [at, len) in vectors of V, then V / 2 ... 4 lanes; the last vector of a
// width may overlap the one before (recomputing the same outputs).
template <int V, class F>
void sc_row_vectors(int64_t& at, int64_t len, const F& f) {
  if constexpr (V >= 4) {
    for (; at + V <= len; at += V) f(std::integral_constant<int, V>{}, at);
    if (at < len && len >= V) {
      f(std::integral_constant<int, V>{}, len - V);
      at = len;
      return;
    }
    sc_row_vectors<V / 2>(at, len, f);
  }
}

// The whole row [0, len): vectors, then single lanes.
template <int W, class F>
void sc_row(int64_t len, const F& f) {
  int64_t at = 0;
  sc_row_vectors<W>(at, len, f);
  for (; at < len; ++at) f(std::integral_constant<int, 1>{}, at);
}

template <int W>
void sc_forward(const SmallConvImage& g, const float* x, const float* wk, float* y) {
  constexpr int B = kSmallConvBlock;
  const int64_t taps = g.c * g.r * g.s;
  for (int64_t kb = 0; kb < sc_blocks(g.k); ++kb) {
    const float* wb = wk + kb * taps * B;
    const int64_t kn = std::min<int64_t>(B, g.k - kb * B);
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      sc_row<W>(g.out_w, [&](auto width, int64_t ow) {
        using E = Ew<decltype(width)::value>;
        using Vec = typename E::V;
        Vec acc[B];
        for (int b = 0; b < B; ++b) acc[b] = E::splat(0.0f);
        const float* wt = wb;
        for (int64_t c = 0; c < g.c; ++c)
          for (int64_t r = 0; r < g.r; ++r) {
            const float* xr = x + (c * g.in_h + oh + r) * g.in_w + ow;
            for (int64_t s = 0; s < g.s; ++s, wt += B) {
              const Vec xv = E::load(xr + s);
              for (int b = 0; b < B; ++b) acc[b] += E::splat(wt[b]) * xv;
            }
          }
        for (int64_t b = 0; b < kn; ++b)
          ew_store(y + ((kb * B + b) * g.out_h + oh) * g.out_w + ow, acc[b]);
      });
  }
}

template <int W>
void sc_backward_filter(const SmallConvImage& g, const float* x, const float* dyz, float* dw) {
  constexpr int B = kSmallConvBlock;
  using E = Ew<W>;
  using Vec = typename E::V;
  const int64_t row = (g.out_w + kSmallConvSlack - 1) / kSmallConvSlack * kSmallConvSlack;
  const int64_t plane = g.out_h * row;
  // Vectors run over the zero-padded dy row (its zeros cancel what x holds past out_w).
  const int64_t width = W == 1 ? g.out_w : row;
  for (int64_t kb = 0; kb < sc_blocks(g.k); ++kb) {
    const float* d0 = dyz + kb * B * plane;
    const int64_t kn = std::min<int64_t>(B, g.k - kb * B);
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t r = 0; r < g.r; ++r)
        for (int64_t s = 0; s < g.s; ++s) {
          Vec acc[B];
          for (int b = 0; b < B; ++b) acc[b] = E::splat(0.0f);
          for (int64_t oh = 0; oh < g.out_h; ++oh) {
            const float* xr = x + (c * g.in_h + oh + r) * g.in_w + s;
            const float* dr = d0 + oh * row;
            for (int64_t ow = 0; ow < width; ow += W) {
              const Vec xv = E::load(xr + ow);
              for (int b = 0; b < B; ++b) acc[b] += E::load(dr + b * plane + ow) * xv;
            }
          }
          for (int64_t b = 0; b < kn; ++b) {
            float sum = 0.0f;
            if constexpr (W == 1)
              sum = acc[b];
            else
              for (int j = 0; j < W; ++j) sum += acc[b][j];
            dw[(((kb * B + b) * g.c + c) * g.r + r) * g.s + s] += sum;
          }
        }
  }
}

template <int W>
void sc_backward_data(const SmallConvImage& g, const float* dyp, const float* wc, float* dx) {
  constexpr int B = kSmallConvBlock;
  const int64_t rows = g.out_h + 2 * (g.r - 1), cols = g.out_w + 2 * (g.s - 1);
  const int64_t taps = g.k * g.r * g.s;
  for (int64_t cb = 0; cb < sc_blocks(g.c); ++cb) {
    const float* wb = wc + cb * taps * B;
    const int64_t cn = std::min<int64_t>(B, g.c - cb * B);
    for (int64_t ih = 0; ih < g.in_h; ++ih)
      sc_row<W>(g.in_w, [&](auto width, int64_t iw) {
        using E = Ew<decltype(width)::value>;
        using Vec = typename E::V;
        Vec acc[B];
        for (int b = 0; b < B; ++b) acc[b] = E::splat(0.0f);
        const float* wt = wb;
        for (int64_t k = 0; k < g.k; ++k)
          for (int64_t r = 0; r < g.r; ++r) {
            const float* dr = dyp + (k * rows + ih - r + g.r - 1) * cols + iw + g.s - 1;
            for (int64_t s = 0; s < g.s; ++s, wt += B) {
              const Vec dv = E::load(dr - s);
              for (int b = 0; b < B; ++b) acc[b] += E::splat(wt[b]) * dv;
            }
          }
        for (int64_t b = 0; b < cn; ++b)
          ew_store(dx + ((cb * B + b) * g.in_h + ih) * g.in_w + iw, acc[b]);
      });
  }
}

template <int W>
SmallConvKernelTable small_conv_kernel_table() {
  SmallConvKernelTable table;
  table.forward = sc_forward<W>;
  table.backward_filter = sc_backward_filter<W>;
  table.backward_data = sc_backward_data<W>;
  return table;
}

}  // namespace
}  // namespace tunescope::cpu
