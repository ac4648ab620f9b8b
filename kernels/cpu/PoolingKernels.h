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
//
// The same code, with kBias true, is the fused bias + ReLU + max pool (PoolingKernelTable.h):
// every input is x + bias before the window compares it, the output is relu of the window's
// maximum, and backward routes dy only where that maximum is > 0. NHWC vectors read the
// biases from a repeated row (bias[i % c]), so one running on into the next pixels adds
// those pixels' biases.
#pragma once

#include <algorithm>
#include <array>
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

// An input as the window compares it: x, or x + bias in the fused op.
template <bool kBias>
inline float pool_input(float x, float bias) {
  if constexpr (kBias)
    return x + bias;
  else
    return x;
}
// The window's output from its maximum: m, or relu(m) in the fused op (as relu.fwd: NaN kept).
template <bool kBias>
inline float pool_output(float m) {
  if constexpr (kBias)
    return m <= 0.0f ? 0.0f : m;
  else
    return m;
}
// Whether the window's gradient flows: always, or where the fused op's output is > 0.
template <bool kBias>
inline bool pool_passes(float best) {
  if constexpr (kBias)
    return best > 0.0f;
  else
    return true;
}

template <bool kBias>
inline void pool_forward_planar_one(const float* x, int64_t in_w, int64_t kh, int64_t kw,
                                    float bias, float* y, int64_t ow) {
  float m = kPoolLowest;
  for (int64_t r = 0; r < kh; ++r)
    for (int64_t k = 0; k < kw; ++k)
      m = pool_max_step(m, pool_input<kBias>(x[r * in_w + ow * kw + k], bias));
  y[ow] = pool_output<kBias>(m);
}

template <bool kBias>
inline void pool_backward_planar_one(const float* x, float bias, const float* dy, float* dx,
                                     int64_t in_w, int64_t kh, int64_t kw, int64_t ow) {
  const float* first = x + ow * kw;
  float best = pool_input<kBias>(first[0], bias);
  int64_t arg = 0;
  for (int64_t r = 0; r < kh; ++r)
    for (int64_t k = 0; k < kw; ++k) {
      const float v = pool_input<kBias>(first[r * in_w + k], bias);
      const bool greater = v > best;
      best = greater ? v : best;
      arg = greater ? r * kw + k : arg;
    }
  const bool passes = pool_passes<kBias>(best);
  for (int64_t r = 0; r < kh; ++r)
    for (int64_t k = 0; k < kw; ++k)
      dx[r * in_w + ow * kw + k] = pool_keep(passes && arg == r * kw + k, dy[ow]);
}

// One window, channels [c0, c1) of NHWC rows (row stride rs floats); bias: per channel
// (read only when kBias).
template <bool kBias>
inline void pool_forward_pixels_one(const float* x, const float* bias, int64_t rs, int64_t c,
                                    int64_t kh, int64_t kw, float* y, int64_t ow, int64_t c0,
                                    int64_t c1) {
  for (int64_t ch = c0; ch < c1; ++ch) {
    const float b = kBias ? bias[ch] : 0.0f;
    float m = kPoolLowest;
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t k = 0; k < kw; ++k)
        m = pool_max_step(m, pool_input<kBias>(x[r * rs + (ow * kw + k) * c + ch], b));
    y[ow * c + ch] = pool_output<kBias>(m);
  }
}

template <bool kBias>
inline void pool_backward_pixels_one(const float* x, const float* bias, const float* dy, float* dx,
                                     int64_t rs, int64_t c, int64_t kh, int64_t kw, int64_t ow,
                                     int64_t c0, int64_t c1) {
  for (int64_t ch = c0; ch < c1; ++ch) {
    const float b = kBias ? bias[ch] : 0.0f;
    float best = pool_input<kBias>(x[ow * kw * c + ch], b);
    int64_t arg = 0;
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t k = 0; k < kw; ++k) {
        const float v = pool_input<kBias>(x[r * rs + (ow * kw + k) * c + ch], b);
        const bool greater = v > best;
        best = greater ? v : best;
        arg = greater ? r * kw + k : arg;
      }
    const bool passes = pool_passes<kBias>(best);
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t k = 0; k < kw; ++k)
        dx[r * rs + (ow * kw + k) * c + ch] =
            pool_keep(passes && arg == r * kw + k, dy[ow * c + ch]);
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

  // The fused op's input and output (see pool_input, pool_output).
  template <bool kBias>
  static V input(V v, V bias) {
    if constexpr (kBias)
      return v + bias;
    else
      return v;
  }
  template <bool kBias>
  static V output(V m) {
    if constexpr (kBias)
      return E::relu(m);
    else
      return m;
  }
  // dy where the window passes its gradient on (see pool_passes), else 0.
  template <bool kBias>
  static V passed(V best, V g) {
    if constexpr (kBias)
      return best > E::splat(0.0f) ? g : E::splat(0.0f);
    else
      return g;
  }

  // Outputs [ow, ow + W) of a kw == 2 row.
  template <bool kBias>
  static void forward_planar2(const float* x, int64_t in_w, int64_t kh, float bias, float* y,
                              int64_t ow) {
    const V bv = E::splat(bias);
    V m = E::splat(kPoolLowest);
    for (int64_t r = 0; r < kh; ++r) {
      const float* p = x + r * in_w + 2 * ow;
      const V a = E::load(p), b = E::load(p + W);
      m = max_step(m, input<kBias>(evens(a, b, kLanes), bv));
      m = max_step(m, input<kBias>(odds(a, b, kLanes), bv));
    }
    ew_store(y + ow, output<kBias>(m));
  }

  template <bool kBias>
  static void backward_planar2(const float* x, float bias, const float* dy, float* dx, int64_t in_w,
                               int64_t kh, int64_t ow) {
    const V bv = E::splat(bias);
    V best = input<kBias>(evens(E::load(x + 2 * ow), E::load(x + 2 * ow + W), kLanes), bv);
    V idx = E::splat(0.0f);
    for (int64_t r = 0; r < kh; ++r) {
      const float* p = x + r * in_w + 2 * ow;
      const V a = E::load(p), b = E::load(p + W);
      const V e = input<kBias>(evens(a, b, kLanes), bv), o = input<kBias>(odds(a, b, kLanes), bv);
      auto greater = e > best;
      best = greater ? e : best;
      idx = greater ? E::splat(static_cast<float>(2 * r)) : idx;
      greater = o > best;
      best = greater ? o : best;
      idx = greater ? E::splat(static_cast<float>(2 * r + 1)) : idx;
    }
    const V g = passed<kBias>(best, E::load(dy + ow));
    for (int64_t r = 0; r < kh; ++r) {
      const V e = keep(idx, static_cast<float>(2 * r), g);
      const V o = keep(idx, static_cast<float>(2 * r + 1), g);
      float* p = dx + r * in_w + 2 * ow;
      ew_store(p, interleave_low(e, o, kLanes));
      ew_store(p + W, interleave_high(e, o, kLanes));
    }
  }

  // One window, channels [ch, ch + W) (which may run into the following pixels).
  template <bool kBias>
  static void forward_pixels(const float* x, const float* bias, int64_t rs, int64_t c, int64_t kh,
                             int64_t kw, float* y, int64_t ow, int64_t ch) {
    const V bv = kBias ? E::load(bias + ch) : E::splat(0.0f);
    V m = E::splat(kPoolLowest);
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t k = 0; k < kw; ++k)
        m = max_step(m, input<kBias>(E::load(x + r * rs + (ow * kw + k) * c + ch), bv));
    ew_store(y + ow * c + ch, output<kBias>(m));
  }

  template <bool kBias>
  static void backward_pixels(const float* x, const float* bias, const float* dy, float* dx,
                              int64_t rs, int64_t c, int64_t kh, int64_t kw, int64_t ow,
                              int64_t ch) {
    const V bv = kBias ? E::load(bias + ch) : E::splat(0.0f);
    V best = input<kBias>(E::load(x + ow * kw * c + ch), bv);
    V idx = E::splat(0.0f);
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t k = 0; k < kw; ++k) {
        const V v = input<kBias>(E::load(x + r * rs + (ow * kw + k) * c + ch), bv);
        const auto greater = v > best;
        best = greater ? v : best;
        idx = greater ? E::splat(static_cast<float>(r * kw + k)) : idx;
      }
    const V g = passed<kBias>(best, E::load(dy + ow * c + ch));
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

// A window row of kw == 2 that is not its plane's last may run one vector past its last
// output: for out_w in (W / 2, W) one vector of W instead of two of W / 2 (LeNet-5's rows
// of 14 with 16 lanes, of 5 with 8). Its reads stay inside the plane (the next window row
// follows), and what it writes past the row (y's next row; dx's next rows) is written
// again later in the same call: rows run in order, a window's kernel rows in order, and
// the columns past the last window are zeroed after the vectors.
template <int W, class Block>
int64_t planar_vectors_spilling(int64_t out_w, const Block& block) {
  if constexpr (W >= 4) {
    if (out_w < W && 2 * out_w > W) {
      block(PoolVec<W>{}, int64_t{0});
      return out_w;
    }
    if (out_w < W) return planar_vectors_spilling<W / 2>(out_w, block);
  }
  return planar_vectors<W>(0, out_w, block);
}

// Planar kernels run `rows` window rows of one plane per call: the 2 x 2 windows' rows
// with kh a constant the compiler unrolls.
template <class Row>
void planar_rows(int64_t kh, int64_t rows, const Row& row) {
  if (kh == 2)
    for (int64_t i = 0; i < rows; ++i) row(i, int64_t{2});
  else
    for (int64_t i = 0; i < rows; ++i) row(i, kh);
}

template <int W, bool kBias>
void pool_max_tiled_forward_planar(const float* x, float bias, int64_t in_w, int64_t kh, int64_t kw,
                                   float* y, int64_t out_w, int64_t rows) {
  planar_rows(kh, rows, [&](int64_t i, int64_t kh_) {
    const float* xr = x + i * kh_ * in_w;
    float* yr = y + i * out_w;
    const auto vector = [&](auto vec, int64_t at) {
      decltype(vec)::template forward_planar2<kBias>(xr, in_w, kh_, bias, yr, at);
    };
    int64_t ow = 0;
    if (kw == 2)
      ow = i + 1 < rows ? planar_vectors_spilling<W>(out_w, vector)
                        : planar_vectors<W>(0, out_w, vector);
    for (; ow < out_w; ++ow) pool_forward_planar_one<kBias>(xr, in_w, kh_, kw, bias, yr, ow);
  });
}

template <int W, bool kBias>
void pool_max_tiled_backward_planar(const float* x, float bias, const float* dy, float* dx,
                                    int64_t in_w, int64_t kh, int64_t kw, int64_t out_w,
                                    int64_t rows) {
  planar_rows(kh, rows, [&](int64_t i, int64_t kh_) {
    const float* xr = x + i * kh_ * in_w;
    const float* dyr = dy + i * out_w;
    float* dxr = dx + i * kh_ * in_w;
    const auto vector = [&](auto vec, int64_t at) {
      decltype(vec)::template backward_planar2<kBias>(xr, bias, dyr, dxr, in_w, kh_, at);
    };
    int64_t ow = 0;
    if (kw == 2)
      ow = i + 1 < rows ? planar_vectors_spilling<W>(out_w, vector)
                        : planar_vectors<W>(0, out_w, vector);
    for (; ow < out_w; ++ow) pool_backward_planar_one<kBias>(xr, bias, dyr, dxr, in_w, kh_, kw, ow);
    for (int64_t r = 0; r < kh_; ++r)
      for (int64_t c = out_w * kw; c < in_w; ++c) dxr[r * in_w + c] = 0.0f;
  });
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

template <int W, bool kBias>
void pool_max_tiled_forward_pixels(const float* x, const float* bias, int64_t in_w, int64_t c,
                                   int64_t kh, int64_t kw, float* y, int64_t out_w) {
  const int64_t rs = in_w * c;
  for (int64_t ow = 0; ow < out_w; ++ow)
    pixel_chunks<W>(
        c,
        [&](int64_t ch) {
          return (ow * kw + kw - 1) * c + ch + W <= rs && ow * c + ch + W <= out_w * c;
        },
        [&](int64_t ch) {
          PoolVec<W>::template forward_pixels<kBias>(x, bias, rs, c, kh, kw, y, ow, ch);
        },
        [&](int64_t c0, int64_t c1) {
          pool_forward_pixels_one<kBias>(x, bias, rs, c, kh, kw, y, ow, c0, c1);
        });
}

template <int W, bool kBias>
void pool_max_tiled_backward_pixels(const float* x, const float* bias, const float* dy, float* dx,
                                    int64_t in_w, int64_t c, int64_t kh, int64_t kw,
                                    int64_t out_w) {
  const int64_t rs = in_w * c, covered = out_w * kw * c;
  for (int64_t ow = 0; ow < out_w; ++ow)
    // Writes stay inside the covered part of each row, so every float a vector runs on
    // into belongs to a later input of this window or to a later window, written after.
    pixel_chunks<W>(
        c,
        [&](int64_t ch) {
          return (ow * kw + kw - 1) * c + ch + W <= covered && ow * c + ch + W <= out_w * c;
        },
        [&](int64_t ch) {
          PoolVec<W>::template backward_pixels<kBias>(x, bias, dy, dx, rs, c, kh, kw, ow, ch);
        },
        [&](int64_t c0, int64_t c1) {
          pool_backward_pixels_one<kBias>(x, bias, dy, dx, rs, c, kh, kw, ow, c0, c1);
        });
  for (int64_t r = 0; r < kh; ++r)
    for (int64_t i = covered; i < rs; ++i) dx[r * rs + i] = 0.0f;
}

// The unfused max pool's entries: the fused code with no bias.
template <int W>
void pool_max_forward_planar(const float* x, int64_t in_w, int64_t kh, int64_t kw, float* y,
                             int64_t out_w, int64_t rows) {
  pool_max_tiled_forward_planar<W, false>(x, 0.0f, in_w, kh, kw, y, out_w, rows);
}
template <int W>
void pool_max_backward_planar(const float* x, const float* dy, float* dx, int64_t in_w, int64_t kh,
                              int64_t kw, int64_t out_w, int64_t rows) {
  pool_max_tiled_backward_planar<W, false>(x, 0.0f, dy, dx, in_w, kh, kw, out_w, rows);
}
template <int W>
void pool_max_forward_pixels(const float* x, int64_t in_w, int64_t c, int64_t kh, int64_t kw,
                             float* y, int64_t out_w) {
  pool_max_tiled_forward_pixels<W, false>(x, nullptr, in_w, c, kh, kw, y, out_w);
}
template <int W>
void pool_max_backward_pixels(const float* x, const float* dy, float* dx, int64_t in_w, int64_t c,
                              int64_t kh, int64_t kw, int64_t out_w) {
  pool_max_tiled_backward_pixels<W, false>(x, nullptr, dy, dx, in_w, c, kh, kw, out_w);
}

// ---- whole planes of 2 x 2 windows as one run of window rows ----
//
// When a plane's rows are shorter than a vector (LeNet-5's pool2: rows of 10 into 5), the
// planar vectors above leave most lanes idle and each plane costs a call. Here a run of
// planes with in_h == 2 out_h and in_w == 2 out_w (no rows or columns past the windows) is
// one sequence of window rows: kFlatWindowRows of them at a time are copied (x + bias)
// into a top-row and a bottom-row buffer, where a window's four inputs are the even and
// odd floats of both at 2 * output, so whole vectors of outputs run across rows and
// planes. Backward writes dx's rows into two such buffers and copies them back.
inline constexpr int64_t kFlatWindowRows = 16;
inline constexpr int64_t kFlatMaxOutW = 16;  // rows of at most 32 inputs

// dst[i] = src[i] (+ bias) for i < n: vectors of W, the last one moved back to end at n
// (writing the same values twice), narrower vectors or scalars below W.
template <int W, bool kBias>
void pool_copy_row(const float* src, int64_t n, float bias, float* dst) {
  if constexpr (W >= 4) {
    if (n >= W) {
      using P = PoolVec<W>;
      const typename P::V bv = P::E::splat(bias);
      int64_t i = 0;
      for (; i + W <= n; i += W)
        ew_store(dst + i, P::template input<kBias>(P::E::load(src + i), bv));
      if (i < n) ew_store(dst + n - W, P::template input<kBias>(P::E::load(src + n - W), bv));
      return;
    }
    if constexpr (W > 4) {
      pool_copy_row<W / 2, kBias>(src, n, bias, dst);
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = pool_input<kBias>(src[i], bias);
}

// Copies window rows [first, first + rows) of the run (x + bias) into top and bottom;
// `channel` and `row` (the window row within its plane) are advanced past them.
template <int W, bool kBias>
void pool_flat_gather(const float* x, const float* bias, int64_t channels, int64_t out_h,
                      int64_t in_w, int64_t first, int64_t rows, int64_t& channel, int64_t& row,
                      float* top, float* bottom) {
  for (int64_t i = 0; i < rows; ++i) {
    const float* xr = x + (first + i) * 2 * in_w;
    const float b = kBias ? bias[channel] : 0.0f;
    pool_copy_row<W, kBias>(xr, in_w, b, top + i * in_w);
    pool_copy_row<W, kBias>(xr + in_w, in_w, b, bottom + i * in_w);
    if (++row == out_h) {
      row = 0;
      if (++channel == channels) channel = 0;
    }
  }
}

template <int W>
struct PoolFlatBuffers {
  // Zeroed: a batch's last vector reads past its rows (what it computes there is dropped).
  alignas(64) float top[kFlatWindowRows * 2 * kFlatMaxOutW + 2 * W] = {};
  alignas(64) float bottom[kFlatWindowRows * 2 * kFlatMaxOutW + 2 * W] = {};
};

// The four inputs of the windows of outputs [o, o + W) of a gathered block: top-left,
// top-right, bottom-left, bottom-right (the order a window's first maximum is taken in).
template <int W>
std::array<typename PoolVec<W>::V, 4> pool_flat_windows(const PoolFlatBuffers<W>& buf, int64_t o) {
  using P = PoolVec<W>;
  using V = typename P::V;
  const V ta = P::E::load(buf.top + 2 * o), tb = P::E::load(buf.top + 2 * o + W);
  const V ba = P::E::load(buf.bottom + 2 * o), bb = P::E::load(buf.bottom + 2 * o + W);
  return {P::evens(ta, tb, P::kLanes), P::odds(ta, tb, P::kLanes), P::evens(ba, bb, P::kLanes),
          P::odds(ba, bb, P::kLanes)};
}

// Planes [0, planes) of x (plane i's channel: (first_channel + i) % channels) into y.
template <int W, bool kBias>
void pool_max2_forward_planes(const float* x, const float* bias, int64_t channels,
                              int64_t first_channel, int64_t planes, int64_t out_h, int64_t out_w,
                              float* y) {
  using P = PoolVec<W>;
  using V = typename P::V;
  const int64_t in_w = 2 * out_w, window_rows = planes * out_h;
  PoolFlatBuffers<W> buf;
  int64_t channel = first_channel, row = 0;
  for (int64_t first = 0; first < window_rows; first += kFlatWindowRows) {
    const int64_t rows = std::min(kFlatWindowRows, window_rows - first);
    pool_flat_gather<W, kBias>(x, bias, channels, out_h, in_w, first, rows, channel, row, buf.top,
                               buf.bottom);
    const int64_t n = rows * out_w;
    float* yb = y + first * out_w;
    for (int64_t o = 0; o < n; o += W) {
      V m = P::E::splat(kPoolLowest);
      for (const V& window_input : pool_flat_windows<W>(buf, o)) m = P::max_step(m, window_input);
      const V out = P::template output<kBias>(m);
      if (o + W <= n) {
        ew_store(yb + o, out);
      } else {
        float tail[W];
        ew_store(tail, out);
        std::copy_n(tail, n - o, yb + o);
      }
    }
  }
}

// dx of planes [0, planes): dy to each window's first maximum (rows, then columns) where it
// passes (the fused op: y > 0), 0 elsewhere.
template <int W, bool kBias>
void pool_max2_backward_planes(const float* x, const float* bias, int64_t channels,
                               int64_t first_channel, int64_t planes, int64_t out_h, int64_t out_w,
                               const float* dy, float* dx) {
  using P = PoolVec<W>;
  using V = typename P::V;
  const int64_t in_w = 2 * out_w, window_rows = planes * out_h;
  PoolFlatBuffers<W> in, grad;
  int64_t channel = first_channel, row = 0;
  for (int64_t first = 0; first < window_rows; first += kFlatWindowRows) {
    const int64_t rows = std::min(kFlatWindowRows, window_rows - first);
    pool_flat_gather<W, kBias>(x, bias, channels, out_h, in_w, first, rows, channel, row, in.top,
                               in.bottom);
    const int64_t n = rows * out_w;
    const float* dyb = dy + first * out_w;
    for (int64_t o = 0; o < n; o += W) {
      const std::array<V, 4> candidates = pool_flat_windows<W>(in, o);
      V best = candidates[0];
      V idx = P::E::splat(0.0f);
      for (int k = 1; k < 4; ++k) {
        const auto greater = candidates[k] > best;
        best = greater ? candidates[k] : best;
        idx = greater ? P::E::splat(static_cast<float>(k)) : idx;
      }
      V g;
      if (o + W <= n) {
        g = P::E::load(dyb + o);
      } else {
        float tail[W] = {};
        std::copy_n(dyb + o, n - o, tail);
        g = P::E::load(tail);
      }
      g = P::template passed<kBias>(best, g);
      const V tl = P::keep(idx, 0.0f, g), tr = P::keep(idx, 1.0f, g);
      const V bl = P::keep(idx, 2.0f, g), br = P::keep(idx, 3.0f, g);
      ew_store(grad.top + 2 * o, P::interleave_low(tl, tr, P::kLanes));
      ew_store(grad.top + 2 * o + W, P::interleave_high(tl, tr, P::kLanes));
      ew_store(grad.bottom + 2 * o, P::interleave_low(bl, br, P::kLanes));
      ew_store(grad.bottom + 2 * o + W, P::interleave_high(bl, br, P::kLanes));
    }
    for (int64_t i = 0; i < rows; ++i) {
      float* dxr = dx + (first + i) * 2 * in_w;
      pool_copy_row<W, false>(grad.top + i * in_w, in_w, 0.0f, dxr);
      pool_copy_row<W, false>(grad.bottom + i * in_w, in_w, 0.0f, dxr + in_w);
    }
  }
}

// The bias gradient's share of `pixels` outputs of c channels: sums of dy where y > 0, in
// double. Rows are short (LeNet-5's: 14 and 5 outputs) and a chain of scalar double adds
// took longer than the pool itself, so the row is summed four lanes at a time in double
// vectors: over a period of lcm(c, 4) floats every lane keeps one channel, and the lanes
// are added into their channels at the end. Channel counts whose period is longer than
// kPassedPeriod floats take the scalar loop.
inline constexpr int64_t kPassedPeriod = 64;

template <int W>
void pool_passed_sums(const float* y, const float* dy, int64_t pixels, int64_t c, double* sums) {
  const int64_t count = pixels * c;
  int64_t i = 0;
  if constexpr (W > 1) {
    if (c == 1) {
      // One channel (every NCHW row): the same sums in the same order as the general case
      // below, without its zeroed array of sixteen accumulators and its slot loop, which
      // took most of this function's time on LeNet-5's rows of 14 and 5.
      using E = Ew<4>;
      typename E::D acc = {};
      for (; i + 4 <= count; i += 4) {
        const typename E::V g = E::load(y + i) > E::splat(0.0f) ? E::load(dy + i) : E::splat(0.0f);
        typename E::D wide[E::P];
        E::widen(g, wide);
        acc += wide[0];
      }
      double sum = sums[0];
      for (int lane = 0; lane < 4; ++lane) sum += acc[lane];
      for (; i < count; ++i) sum += y[i] > 0.0f ? static_cast<double>(dy[i]) : 0.0;
      sums[0] = sum;
      return;
    }
    int64_t period = c;
    while (period % 4 != 0) period += c;
    if (period <= kPassedPeriod) {
      using E = Ew<4>;
      typename E::D acc[kPassedPeriod / 4] = {};
      for (; i + period <= count; i += period)
        for (int64_t v = 0; v < period / 4; ++v) {
          const float* yv = y + i + 4 * v;
          const typename E::V g =
              E::load(yv) > E::splat(0.0f) ? E::load(dy + i + 4 * v) : E::splat(0.0f);
          typename E::D wide[E::P];
          E::widen(g, wide);
          acc[v] += wide[0];
        }
      for (int64_t slot = 0, ch = 0; slot < period; ++slot) {  // counted, not divided
        sums[ch] += acc[slot / 4][slot % 4];
        if (++ch == c) ch = 0;
      }
    }
  }
  // The rest starts at a whole period, so at channel 0.
  for (int64_t ch = 0; i < count; ++i) {
    sums[ch] += y[i] > 0.0f ? static_cast<double>(dy[i]) : 0.0;
    if (++ch == c) ch = 0;
  }
}

template <int W>
PoolingKernelTable pooling_kernel_table() {
  PoolingKernelTable table;
  table.max_tiled_forward_planar = pool_max_forward_planar<W>;
  table.max_tiled_backward_planar = pool_max_backward_planar<W>;
  table.max_tiled_forward_pixels = pool_max_forward_pixels<W>;
  table.max_tiled_backward_pixels = pool_max_backward_pixels<W>;
  table.bias_relu_max_forward_planar = pool_max_tiled_forward_planar<W, true>;
  table.bias_relu_max_backward_planar = pool_max_tiled_backward_planar<W, true>;
  table.bias_relu_max_forward_pixels = pool_max_tiled_forward_pixels<W, true>;
  table.bias_relu_max_backward_pixels = pool_max_tiled_backward_pixels<W, true>;
  table.passed_sums = pool_passed_sums<W>;
  // Forward on rows of up to one vector of outputs; backward only with sixteen lanes and
  // rows of up to half a vector (on AVX2, and on LeNet-5's pool1, the planar vectors are
  // as fast).
  if constexpr (W >= 8) {
    table.bias_relu_max2_forward_planes = pool_max2_forward_planes<W, true>;
    table.flat_forward_max_out_w = std::min<int64_t>(W, kFlatMaxOutW);
  }
  if constexpr (W >= 16) {
    table.bias_relu_max2_backward_planes = pool_max2_backward_planes<W, true>;
    table.flat_backward_max_out_w = W / 2;
  }
  return table;
}

}  // namespace
}  // namespace tunescope::cpu
