// Max pooling over tiled windows (PoolingKernelTable.h), written once over vectors of W
// floats and compiled once per instruction set (Pooling{Scalar,Avx2,Avx512}.cpp, each with
// its own -march). Internal linkage throughout, as in ElementwiseKernels.h.
//
// NCHW (kw == 2): a vector of W outputs reads 2W floats of each input row and splits them
// into the windows' left and right columns with shuffles. NHWC: one vector of channels
// per window input; with fewer than W channels the vector runs on into the next pixels,
// whose own (later) computation overwrites what it wrote there, so only the last window
// of a row, where that would leave the row, takes the scalar loop. Arg-max selections are
// vector compares and blends, never branches on data.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "kernels/cpu/ElementwiseKernels.h"
#include "kernels/cpu/PoolingKernelTable.h"

namespace tunescope::cpu {
namespace {

constexpr float kPoolLowest = -std::numeric_limits<float>::infinity();

inline float pool_max_step(float acc, float v) { return v > acc ? v : acc; }

// g where `keep`, else +0 (adding 0 turns a -0 into +0, as the general loop's 0 + dy does).
inline float pool_keep(bool keep, float g) {
  uint32_t bits;
  std::memcpy(&bits, &g, sizeof bits);
  bits &= 0u - static_cast<uint32_t>(keep);
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out + 0.0f;
}

// ---- scalar windows (any kw; also the vector paths' tails) ----

inline void pool_forward_planar_one(const float* x, int64_t in_w, int64_t kh, int64_t kw, float* y,
                                    int64_t ow) {
  float m = kPoolLowest;
  for (int64_t r = 0; r < kh; ++r)
    for (int64_t k = 0; k < kw; ++k) m = pool_max_step(m, x[r * in_w + ow * kw + k]);
  y[ow] = m;
}

inline void pool_backward_planar_one(const float* x, const float* dy, float* dx, int64_t in_w,
                                     int64_t kh, int64_t kw, int64_t ow) {
  const float* first = x + ow * kw;
  float best = first[0];
  int64_t arg = 0;
  for (int64_t r = 0; r < kh; ++r)
    for (int64_t k = 0; k < kw; ++k) {
      const float v = first[r * in_w + k];
      const bool greater = v > best;
      best = greater ? v : best;
      arg = greater ? r * kw + k : arg;
    }
  for (int64_t r = 0; r < kh; ++r)
    for (int64_t k = 0; k < kw; ++k)
      dx[r * in_w + ow * kw + k] = pool_keep(arg == r * kw + k, dy[ow]);
}

// One window, channels [c0, c1) of NHWC rows (row stride rs floats).
inline void pool_forward_pixels_one(const float* x, int64_t rs, int64_t c, int64_t kh, int64_t kw,
                                    float* y, int64_t ow, int64_t c0, int64_t c1) {
  for (int64_t ch = c0; ch < c1; ++ch) {
    float m = kPoolLowest;
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t k = 0; k < kw; ++k) m = pool_max_step(m, x[r * rs + (ow * kw + k) * c + ch]);
    y[ow * c + ch] = m;
  }
}

inline void pool_backward_pixels_one(const float* x, const float* dy, float* dx, int64_t rs,
                                     int64_t c, int64_t kh, int64_t kw, int64_t ow, int64_t c0,
                                     int64_t c1) {
  for (int64_t ch = c0; ch < c1; ++ch) {
    float best = x[ow * kw * c + ch];
    int64_t arg = 0;
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t k = 0; k < kw; ++k) {
        const float v = x[r * rs + (ow * kw + k) * c + ch];
        const bool greater = v > best;
        best = greater ? v : best;
        arg = greater ? r * kw + k : arg;
      }
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t k = 0; k < kw; ++k)
        dx[r * rs + (ow * kw + k) * c + ch] = pool_keep(arg == r * kw + k, dy[ow * c + ch]);
  }
}

// ---- vectors ----

template <int W>
struct PoolVec {
  using E = Ew<W>;
  using V = typename E::V;

  static V max_step(V acc, V v) { return v > acc ? v : acc; }
  static V keep(V idx, float k, V g) { return (idx == E::splat(k) ? g : E::splat(0.0f)) + 0.0f; }

  // The even and odd lanes of the 2W floats (a, b).
  template <int... I>
  static V evens(V a, V b, std::integer_sequence<int, I...>) {
    return __builtin_shufflevector(a, b, (2 * I)...);
  }
  template <int... I>
  static V odds(V a, V b, std::integer_sequence<int, I...>) {
    return __builtin_shufflevector(a, b, (2 * I + 1)...);
  }
  // The first and second W floats of e and o interleaved (e0 o0 e1 o1 ...).
  template <int... I>
  static V interleave_low(V e, V o, std::integer_sequence<int, I...>) {
    return __builtin_shufflevector(e, o, (I / 2 + (I % 2) * W)...);
  }
  template <int... I>
  static V interleave_high(V e, V o, std::integer_sequence<int, I...>) {
    return __builtin_shufflevector(e, o, ((I + W) / 2 + (I % 2) * W)...);
  }
  static constexpr auto kLanes = std::make_integer_sequence<int, W>{};

  // Outputs [ow, ow + W) of a kw == 2 row.
  static void forward_planar2(const float* x, int64_t in_w, int64_t kh, float* y, int64_t ow) {
    V m = E::splat(kPoolLowest);
    for (int64_t r = 0; r < kh; ++r) {
      const float* p = x + r * in_w + 2 * ow;
      const V a = E::load(p), b = E::load(p + W);
      m = max_step(m, evens(a, b, kLanes));
      m = max_step(m, odds(a, b, kLanes));
    }
    ew_store(y + ow, m);
  }

  static void backward_planar2(const float* x, const float* dy, float* dx, int64_t in_w, int64_t kh,
                               int64_t ow) {
    V best = evens(E::load(x + 2 * ow), E::load(x + 2 * ow + W), kLanes);
    V idx = E::splat(0.0f);
    for (int64_t r = 0; r < kh; ++r) {
      const float* p = x + r * in_w + 2 * ow;
      const V a = E::load(p), b = E::load(p + W);
      const V e = evens(a, b, kLanes), o = odds(a, b, kLanes);
      auto greater = e > best;
      best = greater ? e : best;
      idx = greater ? E::splat(static_cast<float>(2 * r)) : idx;
      greater = o > best;
      best = greater ? o : best;
      idx = greater ? E::splat(static_cast<float>(2 * r + 1)) : idx;
    }
    const V g = E::load(dy + ow);
    for (int64_t r = 0; r < kh; ++r) {
      const V e = keep(idx, static_cast<float>(2 * r), g);
      const V o = keep(idx, static_cast<float>(2 * r + 1), g);
      float* p = dx + r * in_w + 2 * ow;
      ew_store(p, interleave_low(e, o, kLanes));
      ew_store(p + W, interleave_high(e, o, kLanes));
    }
  }

  // One window, channels [ch, ch + W) (which may run into the following pixels).
  static void forward_pixels(const float* x, int64_t rs, int64_t c, int64_t kh, int64_t kw,
                             float* y, int64_t ow, int64_t ch) {
    V m = E::splat(kPoolLowest);
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t k = 0; k < kw; ++k)
        m = max_step(m, E::load(x + r * rs + (ow * kw + k) * c + ch));
    ew_store(y + ow * c + ch, m);
  }

  static void backward_pixels(const float* x, const float* dy, float* dx, int64_t rs, int64_t c,
                              int64_t kh, int64_t kw, int64_t ow, int64_t ch) {
    V best = E::load(x + ow * kw * c + ch);
    V idx = E::splat(0.0f);
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t k = 0; k < kw; ++k) {
        const V v = E::load(x + r * rs + (ow * kw + k) * c + ch);
        const auto greater = v > best;
        best = greater ? v : best;
        idx = greater ? E::splat(static_cast<float>(r * kw + k)) : idx;
      }
    const V g = E::load(dy + ow * c + ch);
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t k = 0; k < kw; ++k)
        ew_store(dx + r * rs + (ow * kw + k) * c + ch,
                 keep(idx, static_cast<float>(r * kw + k), g));
  }
};

// Outputs [ow, out_w) of a kw == 2 planar row in vectors of W, then W / 2 ... 4 lanes; a
// last vector may overlap the one before (recomputing the same values). Returns where the
// scalar loop takes over.
template <int W, class Block>
int64_t planar_vectors(int64_t ow, int64_t out_w, const Block& block) {
  if constexpr (W >= 4) {
    for (; ow + W <= out_w; ow += W) block(PoolVec<W>{}, ow);
    if (ow < out_w && out_w >= W) {
      block(PoolVec<W>{}, out_w - W);
      return out_w;
    }
    return planar_vectors<W / 2>(ow, out_w, block);
  } else {
    return ow;
  }
}

template <int W>
void pool_max_tiled_forward_planar(const float* x, int64_t in_w, int64_t kh, int64_t kw, float* y,
                                   int64_t out_w) {
  int64_t ow = 0;
  if (kw == 2)
    ow = planar_vectors<W>(0, out_w, [&](auto vec, int64_t at) {
      decltype(vec)::forward_planar2(x, in_w, kh, y, at);
    });
  for (; ow < out_w; ++ow) pool_forward_planar_one(x, in_w, kh, kw, y, ow);
}

template <int W>
void pool_max_tiled_backward_planar(const float* x, const float* dy, float* dx, int64_t in_w,
                                    int64_t kh, int64_t kw, int64_t out_w) {
  int64_t ow = 0;
  if (kw == 2)
    ow = planar_vectors<W>(0, out_w, [&](auto vec, int64_t at) {
      decltype(vec)::backward_planar2(x, dy, dx, in_w, kh, at);
    });
  for (; ow < out_w; ++ow) pool_backward_planar_one(x, dy, dx, in_w, kh, kw, ow);
  for (int64_t r = 0; r < kh; ++r)
    for (int64_t i = out_w * kw; i < in_w; ++i) dx[r * in_w + i] = 0.0f;
}

// Channel chunks of one window: whole vectors inside the pixel, the last partial one moved
// back inside it (c >= W) or, when fits(ch) says its reads and writes stay inside their
// rows, run on into the next pixels; what is left goes to scalar(c0, c1).
template <int W, class Fits, class Vector, class Scalar>
void pixel_chunks(int64_t c, const Fits& fits, const Vector& vector, const Scalar& scalar) {
  int64_t ch = 0;
  if constexpr (W > 1) {
    for (; ch + W <= c; ch += W) vector(ch);
    if (ch < c && c >= W) {
      vector(c - W);
      ch = c;
    } else if (ch < c && fits(ch)) {
      vector(ch);
      ch = c;
    }
  }
  if (ch < c) scalar(ch, c);
}

template <int W>
void pool_max_tiled_forward_pixels(const float* x, int64_t in_w, int64_t c, int64_t kh, int64_t kw,
                                   float* y, int64_t out_w) {
  const int64_t rs = in_w * c;
  for (int64_t ow = 0; ow < out_w; ++ow)
    pixel_chunks<W>(
        c,
        [&](int64_t ch) {
          return (ow * kw + kw - 1) * c + ch + W <= rs && ow * c + ch + W <= out_w * c;
        },
        [&](int64_t ch) { PoolVec<W>::forward_pixels(x, rs, c, kh, kw, y, ow, ch); },
        [&](int64_t c0, int64_t c1) { pool_forward_pixels_one(x, rs, c, kh, kw, y, ow, c0, c1); });
}

template <int W>
void pool_max_tiled_backward_pixels(const float* x, const float* dy, float* dx, int64_t in_w,
                                    int64_t c, int64_t kh, int64_t kw, int64_t out_w) {
  const int64_t rs = in_w * c, covered = out_w * kw * c;
  for (int64_t ow = 0; ow < out_w; ++ow)
    // Writes stay inside the covered part of each row, so every float a vector runs on
    // into belongs to a later input of this window or to a later window, written after.
    pixel_chunks<W>(
        c,
        [&](int64_t ch) {
          return (ow * kw + kw - 1) * c + ch + W <= covered && ow * c + ch + W <= out_w * c;
        },
        [&](int64_t ch) { PoolVec<W>::backward_pixels(x, dy, dx, rs, c, kh, kw, ow, ch); },
        [&](int64_t c0, int64_t c1) {
          pool_backward_pixels_one(x, dy, dx, rs, c, kh, kw, ow, c0, c1);
        });
  for (int64_t r = 0; r < kh; ++r)
    for (int64_t i = covered; i < rs; ++i) dx[r * rs + i] = 0.0f;
}

template <int W>
PoolingKernelTable pooling_kernel_table() {
  PoolingKernelTable table;
  table.max_tiled_forward_planar = pool_max_tiled_forward_planar<W>;
  table.max_tiled_backward_planar = pool_max_tiled_backward_planar<W>;
  table.max_tiled_forward_pixels = pool_max_tiled_forward_pixels<W>;
  table.max_tiled_backward_pixels = pool_max_tiled_backward_pixels<W>;
  return table;
}

}  // namespace
}  // namespace tunescope::cpu
