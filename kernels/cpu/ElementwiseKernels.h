// The elementwise and per-channel kernels of the CPU ops, written once over a vector of W
// floats and compiled once per instruction set (ElementwiseScalar.cpp, ElementwiseAvx2.cpp,
// ElementwiseAvx512.cpp, each with its own -march). Everything here has internal linkage:
// an inline function with external linkage compiled for AVX-512 in one file could be the
// copy the linker keeps for the scalar path of another.
//
// Selections are vector compares and blends, never branches on data: a branch on the
// sign of a ReLU's output is taken at random, and its mispredictions made the scalar
// relu.bwd 10x slower than relu.fwd.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/ElementwiseKernelTable.h"

namespace tunescope::cpu {
namespace {

// V holds W floats; its sums go to double vectors D of the native register width (W / P
// doubles each, P parts per V). A 512-bit double vector on the AVX2 path (two registers)
// was shuffled through the stack in 16-byte pieces on every step, 3x slower.
template <int W>
struct EwVec;
template <>
struct EwVec<1> {
  using type = float;
  using wide = double;
  static constexpr int parts = 1;
};
template <>
struct EwVec<4> {
  typedef float type __attribute__((vector_size(16)));
  typedef double wide __attribute__((vector_size(32)));
  static constexpr int parts = 1;
};
template <>
struct EwVec<8> {
  typedef float type __attribute__((vector_size(32)));
  typedef double wide __attribute__((vector_size(32)));
  static constexpr int parts = 2;
};
template <>
struct EwVec<16> {
  typedef float type __attribute__((vector_size(64)));
  typedef double wide __attribute__((vector_size(64)));
  static constexpr int parts = 2;
};

template <class T>
inline T ew_load(const T*, const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
inline void ew_store(void* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

template <int W>
struct Ew {
  using V = typename EwVec<W>::type;
  using D = typename EwVec<W>::wide;

  static V load(const float* p) { return ew_load(static_cast<const V*>(nullptr), p); }
  static D load_wide(const double* p) { return ew_load(static_cast<const D*>(nullptr), p); }
  // x - 0 is x for every x (also -0), so this folds to a plain broadcast; x + 0 does not
  // (it turns -0 into +0) and cost an add before every broadcast.
  static V splat(float x) { return x - V{}; }
  static constexpr int P = EwVec<W>::parts;
  static constexpr int kWideLanes = W / P;
  // The P double vectors of v's lanes, in lane order.
  static void widen(V v, D* out) {
    if constexpr (W == 1) {
      out[0] = static_cast<double>(v);
    } else if constexpr (W == 4) {
      out[0] = __builtin_convertvector(v, D);
    } else if constexpr (W == 8) {
      out[0] = __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3), D);
      out[1] = __builtin_convertvector(__builtin_shufflevector(v, v, 4, 5, 6, 7), D);
    } else {
      out[0] = __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7), D);
      out[1] =
          __builtin_convertvector(__builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15), D);
    }
  }
  static double lane_sum(D d) {
    if constexpr (W == 1) {
      return d;
    } else {
      double s = 0;
      for (int j = 0; j < kWideLanes; ++j) s += d[j];
      return s;
    }
  }
  // Per-channel parameter p at run position j: a vector of p[j..] or p[0] broadcast.
  static V param(const float* p, int64_t j, bool broadcast) {
    return broadcast ? splat(p[0]) : load(p + j);
  }
  // !(v <= 0) keeps NaN, so a diverging run shows up as a NaN loss instead of being clamped.
  static V relu(V v) { return v <= splat(0.0f) ? splat(0.0f) : v; }
  static V relu_gradient(V y, V dy) {
    if constexpr (W == 1)
      return relu_gradient_scalar(y, dy);
    else
      return y > splat(0.0f) ? dy : splat(0.0f);
  }
  static float relu_scalar(float v) { return v <= 0.0f ? 0.0f : v; }
  // A mask, not a select: compiled for one lane, a select became a branch on y's sign.
  static float relu_gradient_scalar(float y, float dy) {
    uint32_t bits;
    std::memcpy(&bits, &dy, sizeof bits);
    bits &= 0u - static_cast<uint32_t>(y > 0.0f);
    float out;
    std::memcpy(&out, &bits, sizeof out);
    return out;
  }
};

template <int W>
void ew_relu_forward(const float* x, float* y, int64_t count) {
  using E = Ew<W>;
  int64_t i = 0;
  for (; i + W <= count; i += W) ew_store(y + i, E::relu(E::load(x + i)));
  for (; i < count; ++i) y[i] = E::relu_scalar(x[i]);
}

template <int W>
void ew_relu_backward(const float* y, const float* dy, float* dx, int64_t count) {
  using E = Ew<W>;
  int64_t i = 0;
  for (; i + W <= count; i += W)
    ew_store(dx + i, E::relu_gradient(E::load(y + i), E::load(dy + i)));
  for (; i < count; ++i) dx[i] = E::relu_gradient_scalar(y[i], dy[i]);
}

template <int W>
void ew_add(const float* a, const float* b, float* y, int64_t count) {
  using E = Ew<W>;
  int64_t i = 0;
  for (; i + W <= count; i += W) ew_store(y + i, E::load(a + i) + E::load(b + i));
  for (; i < count; ++i) y[i] = a[i] + b[i];
}

template <int W>
void ew_accumulate(const float* x, float* y, int64_t count) {
  using E = Ew<W>;
  int64_t i = 0;
  for (; i + W <= count; i += W) ew_store(y + i, E::load(y + i) + E::load(x + i));
  for (; i < count; ++i) y[i] += x[i];
}

// Sums K quantities per run position: term(offset, j, v) fills v[k * P + p], the P double
// vectors of quantity k at positions j.. j + W - 1; term_scalar(offset, j, v) the K doubles
// of position j (the tail). Into out[k][j], or out[k][0] when broadcast.
template <int W, int K, class Term, class ScalarTerm>
void ew_channel_sums(ChannelRun run, double* const* out, const Term& term,
                     const ScalarTerm& term_scalar) {
  using E = Ew<W>;
  using D = typename E::D;
  constexpr int P = E::P, L = E::kWideLanes;
  if (run.broadcast) {
    // One channel: double vector accumulators in registers along the run, then one sum
    // per quantity.
    D acc[K * P] = {};
    double tail[K] = {};
    for (int64_t r = 0; r < run.rows; ++r) {
      const int64_t base = r * run.length;
      int64_t j = 0;
      for (; j + W <= run.length; j += W) {
        D v[K * P];
        term(base + j, j, v);
        for (int q = 0; q < K * P; ++q) acc[q] += v[q];
      }
      for (; j < run.length; ++j) {
        double v[K];
        term_scalar(base + j, j, v);
        for (int k = 0; k < K; ++k) tail[k] += v[k];
      }
    }
    for (int k = 0; k < K; ++k) {
      double sum = tail[k];
      for (int p = 0; p < P; ++p) sum += E::lane_sum(acc[k * P + p]);
      out[k][0] += sum;
    }
    return;
  }
  // Rows of channels (NHWC): tiles of T vectors of channels, each summed down all the rows
  // in registers and added to out once. Adding every row into out instead chained each
  // sum through a store and a load per row and ran at a third of memory speed.
  constexpr int T = W == 16 ? 4 : W == 8 ? 2 : 4;  // K * T * P accumulators fit the registers
  const auto tile = [&](auto vectors, int64_t j0) {
    constexpr int TT = decltype(vectors)::value;
    D acc[K * TT * P] = {};
    for (int64_t r = 0; r < run.rows; ++r) {
      const int64_t base = r * run.length + j0;
      for (int t = 0; t < TT; ++t) {
        D v[K * P];
        term(base + t * W, j0 + t * W, v);
        for (int k = 0; k < K; ++k)
          for (int p = 0; p < P; ++p) acc[(k * TT + t) * P + p] += v[k * P + p];
      }
    }
    for (int k = 0; k < K; ++k)
      for (int t = 0; t < TT; ++t)
        for (int p = 0; p < P; ++p) {
          double* at = out[k] + j0 + t * W + p * L;
          ew_store(at, E::load_wide(at) + acc[(k * TT + t) * P + p]);
        }
  };
  int64_t j = 0;
  for (; j + T * W <= run.length; j += T * W) tile(std::integral_constant<int, T>{}, j);
  for (; j + W <= run.length; j += W) tile(std::integral_constant<int, 1>{}, j);
  if (j < run.length)
    for (int64_t r = 0; r < run.rows; ++r)
      for (int64_t jj = j; jj < run.length; ++jj) {
        double v[K];
        term_scalar(r * run.length + jj, jj, v);
        for (int k = 0; k < K; ++k) out[k][jj] += v[k];
      }
}

template <int W>
void ew_channel_sum(const float* x, ChannelRun run, double* sum) {
  using E = Ew<W>;
  using D = typename E::D;
  double* const out[1] = {sum};
  ew_channel_sums<W, 1>(
      run, out, [&](int64_t i, int64_t, D* v) { E::widen(E::load(x + i), v); },
      [&](int64_t i, int64_t, double* v) { v[0] = x[i]; });
}

template <int W>
void ew_channel_moments(const float* x, ChannelRun run, double* sum, double* sum_sq) {
  using E = Ew<W>;
  using D = typename E::D;
  double* const out[2] = {sum, sum_sq};
  ew_channel_sums<W, 2>(
      run, out,
      [&](int64_t i, int64_t, D* v) {
        E::widen(E::load(x + i), v);
        for (int p = 0; p < E::P; ++p) v[E::P + p] = v[p] * v[p];
      },
      [&](int64_t i, int64_t, double* v) {
        v[0] = x[i];
        v[1] = static_cast<double>(x[i]) * x[i];
      });
}

template <int W>
void ew_channel_affine(const float* x, const float* residual, float* y, ChannelRun run,
                       const float* center, const float* scale, const float* offset, bool relu) {
  using E = Ew<W>;
  using V = typename E::V;
  const bool b = run.broadcast;
  for (int64_t r = 0; r < run.rows; ++r) {
    const int64_t base = r * run.length;
    int64_t j = 0;
    for (; j + W <= run.length; j += W) {
      const int64_t i = base + j;
      V v = (E::load(x + i) - E::param(center, j, b)) * E::param(scale, j, b) +
            E::param(offset, j, b);
      if (residual) v += E::load(residual + i);
      if (relu) v = E::relu(v);
      ew_store(y + i, v);
    }
    for (; j < run.length; ++j) {
      const int64_t i = base + j, c = b ? 0 : j;
      float v = (x[i] - center[c]) * scale[c] + offset[c];
      if (residual) v += residual[i];
      y[i] = relu ? E::relu_scalar(v) : v;
    }
  }
}

template <int W>
void ew_channel_gradient_moments(const float* x, const float* y, const float* dy, ChannelRun run,
                                 const float* mean, double* sum_g, double* sum_gx) {
  using E = Ew<W>;
  using V = typename E::V;
  using D = typename E::D;
  const bool b = run.broadcast;
  double* const out[2] = {sum_g, sum_gx};
  ew_channel_sums<W, 2>(
      run, out,
      [&](int64_t i, int64_t j, D* v) {
        V g = E::load(dy + i);
        if (y) g = E::relu_gradient(E::load(y + i), g);
        E::widen(g, v);
        E::widen(g * (E::load(x + i) - E::param(mean, j, b)), v + E::P);
      },
      [&](int64_t i, int64_t j, double* v) {
        const float g = y ? E::relu_gradient_scalar(y[i], dy[i]) : dy[i];
        v[0] = g;
        v[1] = g * (x[i] - mean[b ? 0 : j]);
      });
}

template <int W>
void ew_channel_gradient_apply(const float* x, const float* y, const float* dy, float* dx,
                               float* dg, ChannelRun run, const float* mean, const float* a,
                               const float* bs, const float* d) {
  using E = Ew<W>;
  using V = typename E::V;
  const bool b = run.broadcast;
  for (int64_t r = 0; r < run.rows; ++r) {
    const int64_t base = r * run.length;
    int64_t j = 0;
    for (; j + W <= run.length; j += W) {
      const int64_t i = base + j;
      V g = E::load(dy + i);
      if (y) g = E::relu_gradient(E::load(y + i), g);
      if (dg) ew_store(dg + i, g);
      const V xc = E::load(x + i) - E::param(mean, j, b);
      ew_store(dx + i, E::param(a, j, b) * g + E::param(bs, j, b) * xc + E::param(d, j, b));
    }
    for (; j < run.length; ++j) {
      const int64_t i = base + j, c = b ? 0 : j;
      const float g = y ? E::relu_gradient_scalar(y[i], dy[i]) : dy[i];
      if (dg) dg[i] = g;
      dx[i] = a[c] * g + bs[c] * (x[i] - mean[c]) + d[c];
    }
  }
}

template <int W>
ElementwiseKernelTable elementwise_kernel_table() {
  ElementwiseKernelTable table;
  table.relu_forward = ew_relu_forward<W>;
  table.relu_backward = ew_relu_backward<W>;
  table.add = ew_add<W>;
  table.accumulate = ew_accumulate<W>;
  table.channel_sum = ew_channel_sum<W>;
  table.channel_moments = ew_channel_moments<W>;
  table.channel_affine = ew_channel_affine<W>;
  table.channel_gradient_moments = ew_channel_gradient_moments<W>;
  table.channel_gradient_apply = ew_channel_gradient_apply<W>;
  return table;
}

}  // namespace
}  // namespace tunescope::cpu
