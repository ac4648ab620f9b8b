// The kernels of OwnFft2d as templates over the lane type: a vector of eight floats
// (eight planes, one per lane; the file that includes this defines it) or float (one
// plane). Included only by the per-instruction-set files
// (OwnFftScalar.cpp, OwnFftAvx2.cpp, OwnFftAvx512.cpp), each compiled with its own
// -march (see CMakeLists.txt); everything here has internal linkage, so no copy built
// for one instruction set can stand in for another's. It therefore calls nothing with
// external linkage either: no standard containers, no Vec8.h functions, and only
// templates touch vector types (so the scalar build sees none).
//
// Data being transformed lives in lane-interleaved float buffers: element i of an array
// holds its W lanes at p[i * W .. i * W + W). Planes each in their own block are moved
// in and out of that layout with 8x8 transposes, the only shuffles on the vector path;
// interleaved planes (NHWC) are in it already, one plain load per element.
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/cpu/OwnFftKernelTable.h"

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace tunescope::cpu {
namespace {

using cfloat = std::complex<float>;

// Loads and stores of one lane vector: W planes' values of one element. Plain memcpy,
// not Vec8.h's load8/store8: those have external linkage, and a copy compiled for
// AVX-512 here could be the one the linker keeps for every other file.
template <class V>
struct Lanes {
  static constexpr int W = static_cast<int>(sizeof(V) / sizeof(float));
  [[gnu::always_inline]] static V load(const float* p) {
    V v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
  }
  [[gnu::always_inline]] static void store(float* p, V v) { __builtin_memcpy(p, &v, sizeof v); }
};

// Broadcast: `x - V{}` is x for float and eight copies of x for Vec8. Not `V{} + x`:
// 0 + x is not x for x = -0, so the compiler must add (a scalar add per splat, perf);
// x - 0 is x for every x, so it folds to the broadcast.
template <class V>
[[gnu::always_inline]] inline V splat(float x) {
  return x - V{};
}

// In-register DFT of R points (re[k], im[k]) -> (re[j], im[j]), R in {2, 3, 4, 5}: the
// Stockham butterflies. The inverse is the same with i replaced by -i.
template <int R, bool Inverse, class V>
[[gnu::always_inline]] inline void butterfly(V* re, V* im) {
  // (xr, xi) times -i (forward) or +i (inverse).
  const auto rot = [](V xr, V xi, V& outr, V& outi) {
    if constexpr (Inverse)
      outr = -xi, outi = xr;
    else
      outr = xi, outi = -xr;
  };
  if constexpr (R == 2) {
    const V ar = re[0], ai = im[0];
    re[0] = ar + re[1], im[0] = ai + im[1];
    re[1] = ar - re[1], im[1] = ai - im[1];
  } else if constexpr (R == 4) {
    const V apcr = re[0] + re[2], apci = im[0] + im[2], amcr = re[0] - re[2], amci = im[0] - im[2];
    const V bpdr = re[1] + re[3], bpdi = im[1] + im[3];
    V jr, ji;  // -i (b - d) forward, +i (b - d) inverse
    rot(re[1] - re[3], im[1] - im[3], jr, ji);
    re[0] = apcr + bpdr, im[0] = apci + bpdi;
    re[1] = amcr + jr, im[1] = amci + ji;
    re[2] = apcr - bpdr, im[2] = apci - bpdi;
    re[3] = amcr - jr, im[3] = amci - ji;
  } else if constexpr (R == 3) {
    const V half = splat<V>(0.5f), s3 = splat<V>(0.86602540378443864676f);  // sin(2 pi / 3)
    const V tr = re[1] + re[2], ti = im[1] + im[2];
    V jr, ji;  // -i sin(2 pi / 3) (b - c) forward
    rot(s3 * (re[1] - re[2]), s3 * (im[1] - im[2]), jr, ji);
    const V mr = re[0] - half * tr, mi = im[0] - half * ti;
    re[0] = re[0] + tr, im[0] = im[0] + ti;
    re[1] = mr + jr, im[1] = mi + ji;
    re[2] = mr - jr, im[2] = mi - ji;
  } else {
    static_assert(R == 5);
    const V c1 = splat<V>(0.30901699437494742410f), c2 = splat<V>(-0.80901699437494742410f);
    const V s1 = splat<V>(0.95105651629515357212f), s2 = splat<V>(0.58778525229247312917f);
    const V t1r = re[1] + re[4], t1i = im[1] + im[4], t2r = re[2] + re[3], t2i = im[2] + im[3];
    const V t3r = re[1] - re[4], t3i = im[1] - im[4], t4r = re[2] - re[3], t4i = im[2] - im[3];
    const V m1r = re[0] + c1 * t1r + c2 * t2r, m1i = im[0] + c1 * t1i + c2 * t2i;
    const V m2r = re[0] + c2 * t1r + c1 * t2r, m2i = im[0] + c2 * t1i + c1 * t2i;
    V n1r, n1i, n2r, n2i;  // -i (s1 t3 + s2 t4) and -i (s2 t3 - s1 t4) forward
    rot(s1 * t3r + s2 * t4r, s1 * t3i + s2 * t4i, n1r, n1i);
    rot(s2 * t3r - s1 * t4r, s2 * t3i - s1 * t4i, n2r, n2i);
    re[0] = re[0] + t1r + t2r, im[0] = im[0] + t1i + t2i;
    re[1] = m1r + n1r, im[1] = m1i + n1i;
    re[4] = m1r - n1r, im[4] = m1i - n1i;
    re[2] = m2r + n2r, im[2] = m2i + n2i;
    re[3] = m2r - n2r, im[3] = m2i - n2i;
  }
}

// One Stockham stage of radix R on sub-length m with stride s between the interleaved
// sub-sequences: y[q + s (R p + j)] = W_m^(j p) * DFT_R(x[q + s (p + k m / R)], k < R)[j].
template <int R, class V, bool Inverse>
void stockham_stage(int64_t m, int64_t s, const float* tw, const float* xr, const float* xi,
                    float* yr, float* yi) {
  using L = Lanes<V>;
  constexpr int W = L::W;
  const int64_t qr = m / R;
  // Inverse transforms use the conjugate twiddles.
  const float sign = Inverse ? -1.0f : 1.0f;
  for (int64_t p = 0; p < qr; ++p) {
    const float* w = tw + 2 * (R - 1) * p;
    V wr[R], wi[R];
    for (int j = 1; j < R; ++j)
      wr[j] = splat<V>(w[2 * j - 2]), wi[j] = splat<V>(sign * w[2 * j - 1]);
    for (int64_t q = 0; q < s; ++q) {
      V re[R], im[R];
      for (int k = 0; k < R; ++k) {
        const int64_t i = (q + s * (p + k * qr)) * W;
        re[k] = L::load(xr + i), im[k] = L::load(xi + i);
      }
      butterfly<R, Inverse>(re, im);
      const int64_t o = (q + s * R * p) * W, os = s * W;
      L::store(yr + o, re[0]), L::store(yi + o, im[0]);
      for (int j = 1; j < R; ++j) {
        if (p == 0) {  // every twiddle is 1
          L::store(yr + o + j * os, re[j]), L::store(yi + o + j * os, im[j]);
        } else {
          L::store(yr + o + j * os, re[j] * wr[j] - im[j] * wi[j]);
          L::store(yi + o + j * os, re[j] * wi[j] + im[j] * wr[j]);
        }
      }
    }
  }
}

// Complex FFT of length n on split arrays (xr, xi), lane-interleaved, with scratch
// (yr, yi) of the same size. Stockham: each stage reads one buffer and writes the other
// in an order that leaves the result sorted. Returns true when the result ended in y.
template <class V, bool Inverse>
bool complex_fft(int64_t n, const OwnFftFactors& tw, float* xr, float* xi, float* yr, float* yi) {
  const float* t = tw.stages;
  int64_t s = 1;  // stride between the interleaved sub-sequences
  int64_t m = n;
  bool in_y = false;
  for (int64_t i = 0; i < tw.radix_count; ++i) {
    const int r = tw.radices[i];
    switch (r) {
      case 4: stockham_stage<4, V, Inverse>(m, s, t, xr, xi, yr, yi); break;
      case 2: stockham_stage<2, V, Inverse>(m, s, t, xr, xi, yr, yi); break;
      case 3: stockham_stage<3, V, Inverse>(m, s, t, xr, xi, yr, yi); break;
      default: stockham_stage<5, V, Inverse>(m, s, t, xr, xi, yr, yi); break;
    }
    t += 2 * (r - 1) * (m / r);
    float* const tr = xr;
    float* const ti = xi;
    xr = yr, xi = yi, yr = tr, yi = ti;
    in_y = !in_y;
    s *= r;
    m /= r;
  }
  return in_y;
}

// Fixed-length codelets for the small planes (lengths up to 20): the same Stockham
// stages as complex_fft with every length, stride and index a compile-time constant, on
// arrays of lane vectors that the compiler keeps in registers. At 8x8..20x20 the loop
// and index overhead of the generic stages, and the trips through the scratch buffers,
// cost more than the butterflies (perf, docs/BENCHMARKS.md).

// f(0), ..., f(N - 1) unrolled when N > 0, else a loop to n.
template <int N, class F>
[[gnu::always_inline]] inline void repeat(int64_t n, F&& f) {
  if constexpr (N > 0) {
    [&]<int... I>(std::integer_sequence<int, I...>) __attribute__((always_inline)) {
      (f(int64_t{I}), ...);
    }
    (std::make_integer_sequence<int, N>{});
  } else {
    for (int64_t i = 0; i < n; ++i) f(i);
  }
}

// The first radix of the stage order radices_of() in OwnFft.cpp gives for length m.
constexpr int first_radix(int m) { return m % 4 == 0 ? 4 : m % 2 == 0 ? 2 : m % 3 == 0 ? 3 : 5; }

// The stages from sub-length M (stride S) down: x is the caller's arrays, y the partner;
// InY says which holds the current data. The result ends in x.
template <int N, int M, int S, bool InY, bool Inverse, class V>
[[gnu::always_inline]] inline void fixed_stages(V* xr, V* xi, V* yr, V* yi, const float* tw) {
  if constexpr (M == 1) {
    if constexpr (InY)
      repeat<N>(
          N, [&](int64_t i) __attribute__((always_inline)) { xr[i] = yr[i], xi[i] = yi[i]; });
  } else {
    constexpr int R = first_radix(M), Q = M / R;
    const V* ar = InY ? yr : xr;
    const V* ai = InY ? yi : xi;
    V* br = InY ? xr : yr;
    V* bi = InY ? xi : yi;
    const float sign = Inverse ? -1.0f : 1.0f;  // inverse: conjugate twiddles
    repeat<Q>(
        Q, [&](int64_t p) __attribute__((always_inline)) {
          repeat<S>(
              S, [&](int64_t q) __attribute__((always_inline)) {
                V re[R], im[R];
                repeat<R>(
                    R, [&](int64_t k) __attribute__((always_inline)) {
                      re[k] = ar[q + S * (p + k * Q)], im[k] = ai[q + S * (p + k * Q)];
                    });
                butterfly<R, Inverse>(re, im);
                const int64_t o = q + S * R * p;
                repeat<R>(
                    R, [&](int64_t j) __attribute__((always_inline)) {
                      if (j == 0 || p == 0) {  // every twiddle is 1
                        br[o + j * S] = re[j], bi[o + j * S] = im[j];
                      } else {
                        const float* w = tw + 2 * (R - 1) * p + 2 * j - 2;
                        const V wr = splat<V>(w[0]), wi = splat<V>(sign * w[1]);
                        br[o + j * S] = re[j] * wr - im[j] * wi;
                        bi[o + j * S] = re[j] * wi + im[j] * wr;
                      }
                    });
              });
        });
    fixed_stages<N, Q, S * R, !InY, Inverse>(xr, xi, yr, yi, tw + 2 * (R - 1) * Q);
  }
}

// Complex FFT of length N in place on (re, im); `tw` is OwnFftFactors::stages of N.
template <int N, bool Inverse, class V>
[[gnu::always_inline]] inline void fixed_fft(V* re, V* im, const float* tw) {
  V yr[N], yi[N];
  fixed_stages<N, N, 1, false, Inverse>(re, im, yr, yi, tw);
}

// f(std::integral_constant<int, n>) for the lengths that have codelets, else
// f(std::integral_constant<int, 0>) (the generic stages): every even length up to 20
// with no prime factor but 2, 3, 5 (rows and columns of planes up to 20x20), and the
// half lengths of their rows.
template <class F>
[[gnu::always_inline]] inline void with_codelet(int64_t n, F&& f) {
  switch (n) {
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 5: return f(std::integral_constant<int, 5>{});
    case 6: return f(std::integral_constant<int, 6>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 9: return f(std::integral_constant<int, 9>{});
    case 10: return f(std::integral_constant<int, 10>{});
    case 12: return f(std::integral_constant<int, 12>{});
    case 16: return f(std::integral_constant<int, 16>{});
    case 18: return f(std::integral_constant<int, 18>{});
    case 20: return f(std::integral_constant<int, 20>{});
    default: return f(std::integral_constant<int, 0>{});
  }
}

// dst[j * 8 + l] = src_l[j] for j < 8, l < 8: eight rows of eight floats become eight
// lane vectors (unpack, shuffle, then swap 128-bit halves).
template <class V>
[[gnu::always_inline]] inline void transpose8(const V r[8], V out[8]) {
  V t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = __builtin_shufflevector(r[2 * i], r[2 * i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[2 * i + 1] = __builtin_shufflevector(r[2 * i], r[2 * i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int h = 0; h < 2; ++h) {
    const int a = 4 * h, b = 4 * h + 2;
    u[a] = __builtin_shufflevector(t[a], t[b], 0, 1, 8, 9, 4, 5, 12, 13);
    u[a + 1] = __builtin_shufflevector(t[a], t[b], 2, 3, 10, 11, 6, 7, 14, 15);
    u[a + 2] = __builtin_shufflevector(t[a + 1], t[b + 1], 0, 1, 8, 9, 4, 5, 12, 13);
    u[a + 3] = __builtin_shufflevector(t[a + 1], t[b + 1], 2, 3, 10, 11, 6, 7, 14, 15);
  }
  for (int i = 0; i < 4; ++i) {
    out[i] = __builtin_shufflevector(u[i], u[i + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    out[i + 4] = __builtin_shufflevector(u[i], u[i + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

// Lane-interleaves n elements of `lanes` <= W planes: dst[j * W + l] =
// src[l * at.plane + j * at.element] for l < lanes, 0 for the lanes of a partial group
// (so they compute on zeros, not on garbage that could be slow denormals).
template <class V>
void interleave(const float* src, OwnFftRealLayout at, int64_t n, float* dst, int lanes) {
  constexpr int W = Lanes<V>::W;
  int64_t j = 0;
  if constexpr (W == 8) {
    if (lanes == W && at.plane == 1) {  // interleaved planes (NHWC-like): lanes are adjacent
      for (; j < n; ++j) Lanes<V>::store(dst + j * 8, Lanes<V>::load(src + j * at.element));
      return;
    }
    if (at.element == 1)  // a partial group transposes zeros into its empty lanes
      for (; j + 8 <= n; j += 8) {
        V r[8], c[8];
        for (int l = 0; l < 8; ++l) r[l] = l < lanes ? Lanes<V>::load(src + l * at.plane + j) : V{};
        transpose8(r, c);
        for (int k = 0; k < 8; ++k) Lanes<V>::store(dst + (j + k) * 8, c[k]);
      }
  }
  for (; j < n; ++j)
    for (int l = 0; l < W; ++l)
      dst[j * W + l] = l < lanes ? src[l * at.plane + j * at.element] : 0.0f;
}

// The inverse of interleave, for the first `lanes` lanes:
// dst[l * at.plane + j * at.element] = src[j * W + l].
template <class V>
void deinterleave(const float* src, int64_t n, float* dst, OwnFftRealLayout at, int lanes) {
  constexpr int W = Lanes<V>::W;
  int64_t j = 0;
  if constexpr (W == 8) {
    if (lanes == W && at.plane == 1) {
      for (; j < n; ++j) Lanes<V>::store(dst + j * at.element, Lanes<V>::load(src + j * 8));
      return;
    }
    if (at.element == 1)
      for (; j + 8 <= n; j += 8) {
        V r[8], c[8];
        for (int k = 0; k < 8; ++k) r[k] = Lanes<V>::load(src + (j + k) * 8);
        transpose8(r, c);
        if (lanes == 8) {  // full groups: eight stores without a test each
          for (int l = 0; l < 8; ++l) Lanes<V>::store(dst + l * at.plane + j, c[l]);
        } else {
          for (int l = 0; l < lanes; ++l) Lanes<V>::store(dst + l * at.plane + j, c[l]);
        }
      }
  }
  for (; j < n; ++j)
    for (int l = 0; l < lanes; ++l) dst[l * at.plane + j * at.element] = src[j * W + l];
}

// Complex FFT of columns [k0, k1) of the half spectra (rows x half bins); N: rows when
// that length has a codelet, else 0.
template <class V, bool Inverse, int N>
[[gnu::flatten]] void transform_columns_n(const OwnFftPlan& plan, const OwnFftScratch& s,
                                          int64_t k0, int64_t k1) {
  using L = Lanes<V>;
  constexpr int W = L::W;
  const int64_t rows = plan.rows, half = plan.cols / 2 + 1;
  for (int64_t k = k0; k < k1; ++k) {
    float* const col = s.spec + 2 * k * W;  // row r: re at col + 2 r half W, im W after
    if constexpr (N > 0) {
      V re[N], im[N];
      repeat<N>(
          N, [&](int64_t r) __attribute__((always_inline)) {
            re[r] = L::load(col + 2 * r * half * W), im[r] = L::load(col + (2 * r * half + 1) * W);
          });
      fixed_fft<N, Inverse>(re, im, plan.col.stages);
      repeat<N>(
          N, [&](int64_t r) __attribute__((always_inline)) {
            L::store(col + 2 * r * half * W, re[r]), L::store(col + (2 * r * half + 1) * W, im[r]);
          });
    } else {
      for (int64_t r = 0; r < rows; ++r) {
        L::store(s.xr + r * W, L::load(col + 2 * r * half * W));
        L::store(s.xi + r * W, L::load(col + (2 * r * half + 1) * W));
      }
      const bool in_y = complex_fft<V, Inverse>(rows, plan.col, s.xr, s.xi, s.yr, s.yi);
      const float* zr = in_y ? s.yr : s.xr;
      const float* zi = in_y ? s.yi : s.xi;
      for (int64_t r = 0; r < rows; ++r) {
        L::store(col + 2 * r * half * W, L::load(zr + r * W));
        L::store(col + (2 * r * half + 1) * W, L::load(zi + r * W));
      }
    }
  }
}

template <class V, bool Inverse>
void transform_columns(const OwnFftPlan& plan, const OwnFftScratch& s, int64_t k0, int64_t k1) {
  if (plan.rows == 1) return;
  with_codelet(plan.rows, [&](auto n) { transform_columns_n<V, Inverse, n()>(plan, s, k0, k1); });
}

// r2c of real rows [r0, r1) of one group of W planes into the half spectra; M: the
// packed row length cols / 2 when it has a codelet, else 0.
template <class V, int M>
[[gnu::flatten]] void forward_rows_n(const OwnFftPlan& plan, const OwnFftScratch& s,
                                     const float* real, OwnFftRealLayout at, int lanes, int64_t r0,
                                     int64_t r1) {
  using L = Lanes<V>;
  constexpr int W = L::W;
  const int64_t cols = plan.cols, m = M > 0 ? M : cols / 2, half = m + 1;
  const float* roots = plan.real.roots;
  const V one_half = splat<V>(0.5f);
  const int64_t sweep = own_fft_rows_per_sweep(cols);
  for (int64_t r = r0; r < r1; ++r) {
    // The strided read of the planes is this pass's load: no separate transpose.
    const int64_t in_line = (r - r0) % sweep;
    if (in_line == 0) {
      const int64_t n = r1 - r < sweep ? r1 - r : sweep;
      interleave<V>(real + r * cols * at.element, at, n * cols, s.line, lanes);
    }
    const float* line = s.line + in_line * cols * W;
    float* sr = s.spec + 2 * r * half * W;  // bin k: sr + 2kW, si + 2kW
    float* si = sr + W;
    if (cols == 1) {
      L::store(sr, L::load(line));
      L::store(si, V{});
      continue;
    }
    // Half-length trick: z[k] = x[2k] + i x[2k+1], Z = FFT_m(z), then split Z into the
    // spectra of the even and odd samples and combine them with W_cols^k.
    V zre[M > 0 ? M : 1], zim[M > 0 ? M : 1];  // the codelet's registers
    const float* zr = s.xr;                    // else the generic stages' result
    const float* zi = s.xi;
    if constexpr (M > 0) {
      repeat<M>(
          M, [&](int64_t k) __attribute__((always_inline)) {
            zre[k] = L::load(line + 2 * k * W), zim[k] = L::load(line + (2 * k + 1) * W);
          });
      fixed_fft<M, false>(zre, zim, plan.row.stages);
    } else {
      for (int64_t k = 0; k < m; ++k) {
        L::store(s.xr + k * W, L::load(line + 2 * k * W));
        L::store(s.xi + k * W, L::load(line + (2 * k + 1) * W));
      }
      if (complex_fft<V, false>(m, plan.row, s.xr, s.xi, s.yr, s.yi)) zr = s.yr, zi = s.yi;
    }
    const auto z = [&](int64_t k, V & re, V & im) __attribute__((always_inline)) {
      if constexpr (M > 0)
        re = zre[k], im = zim[k];
      else
        re = L::load(zr + k * W), im = L::load(zi + k * W);
    };
    V z0r, z0i;
    z(0, z0r, z0i);
    L::store(sr, z0r + z0i), L::store(si, V{});
    L::store(sr + 2 * m * W, z0r - z0i), L::store(si + 2 * m * W, V{});
    repeat<M - 1>(
        m - 1, [&](int64_t j) __attribute__((always_inline)) {
          const int64_t k = j + 1;
          V ar, ai, br, bi;
          z(k, ar, ai);
          z(m - k, br, bi);
          bi = -bi;                                                       // conj(Z[m-k])
          const V er = (ar + br) * one_half, ei = (ai + bi) * one_half;   // even spectrum
          const V or_ = (ai - bi) * one_half, oi = (br - ar) * one_half;  // odd: -i/2 (A - B)
          const V wr = splat<V>(roots[2 * k]), wi = splat<V>(roots[2 * k + 1]);
          L::store(sr + 2 * k * W, er + or_ * wr - oi * wi);
          L::store(si + 2 * k * W, ei + or_ * wi + oi * wr);
        });
  }
}

template <class V>
void forward_rows(const OwnFftPlan& plan, const OwnFftScratch& s, const float* real,
                  OwnFftRealLayout at, int lanes, int64_t r0, int64_t r1) {
  with_codelet(plan.cols / 2,
               [&](auto m) { forward_rows_n<V, m()>(plan, s, real, at, lanes, r0, r1); });
}

// Spectrum rows [r0, r1) of the group out to its planes. Planes store bins contiguously
// across rows, so a range of rows leaves in one sweep.
template <class V>
void store_rows(const OwnFftPlan& plan, const OwnFftScratch& s, cfloat* spectrum,
                int64_t complex_stride, int lanes, int64_t r0, int64_t r1) {
  constexpr int W = Lanes<V>::W;
  const int64_t half = plan.cols / 2 + 1;
  deinterleave<V>(s.spec + 2 * r0 * half * W, 2 * (r1 - r0) * half,
                  reinterpret_cast<float*>(spectrum) + 2 * r0 * half, {2 * complex_stride, 1},
                  lanes);
}

template <class V>
void load_rows(const OwnFftPlan& plan, const OwnFftScratch& s, const cfloat* spectrum,
               int64_t complex_stride, int lanes, int64_t r0, int64_t r1) {
  constexpr int W = Lanes<V>::W;
  const int64_t half = plan.cols / 2 + 1;
  interleave<V>(reinterpret_cast<const float*>(spectrum) + 2 * r0 * half, {2 * complex_stride, 1},
                2 * (r1 - r0) * half, s.spec + 2 * r0 * half * W, lanes);
}

// c2r of spectrum rows [r0, r1) of the group (columns already inverted) into its planes;
// M as for forward_rows_n.
template <class V, int M>
[[gnu::flatten]] void inverse_rows_n(const OwnFftPlan& plan, const OwnFftScratch& s, float* real,
                                     OwnFftRealLayout at, int lanes, int64_t r0, int64_t r1) {
  using L = Lanes<V>;
  constexpr int W = L::W;
  const int64_t cols = plan.cols, m = M > 0 ? M : cols / 2, half = m + 1;
  const float* roots = plan.real.roots;
  const int64_t sweep = own_fft_rows_per_sweep(cols);
  for (int64_t r = r0; r < r1; ++r) {
    const float* sr = s.spec + 2 * r * half * W;  // bin k: sr + 2kW, si + 2kW
    const float* si = sr + W;
    const int64_t in_line = (r - r0) % sweep;
    float* line = s.line + in_line * cols * W;
    if (cols == 1) {
      L::store(line, L::load(sr));
    } else {
      // Undo the half-length trick: Z[k] = (X[k] + conj(X[m-k])) + i W^-k (X[k] -
      // conj(X[m-k])) is twice the packed spectrum, so the length-m inverse yields cols
      // times the signal.
      V zre[M > 0 ? M : 1], zim[M > 0 ? M : 1];  // the codelet's registers
      repeat<M>(
          m, [&](int64_t k) __attribute__((always_inline)) {
            const V ar = L::load(sr + 2 * k * W), ai = L::load(si + 2 * k * W);
            const V br = L::load(sr + 2 * (m - k) * W), bi = -L::load(si + 2 * (m - k) * W);
            const V er = ar + br, ei = ai + bi, dr = ar - br, di = ai - bi;
            const V wr = splat<V>(roots[2 * k]), wi = splat<V>(-roots[2 * k + 1]);  // W^-k
            const V or_ = dr * wr - di * wi, oi = dr * wi + di * wr;
            if constexpr (M > 0)
              zre[k] = er - oi, zim[k] = ei + or_;  // + i * o
            else
              L::store(s.xr + k * W, er - oi), L::store(s.xi + k * W, ei + or_);
          });
      if constexpr (M > 0) {
        fixed_fft<M, true>(zre, zim, plan.row.stages);
        repeat<M>(
            M, [&](int64_t k) __attribute__((always_inline)) {
              L::store(line + 2 * k * W, zre[k]), L::store(line + (2 * k + 1) * W, zim[k]);
            });
      } else {
        const bool in_y = complex_fft<V, true>(m, plan.row, s.xr, s.xi, s.yr, s.yi);
        const float* zr = in_y ? s.yr : s.xr;
        const float* zi = in_y ? s.yi : s.xi;
        for (int64_t k = 0; k < m; ++k) {
          L::store(line + 2 * k * W, L::load(zr + k * W));
          L::store(line + (2 * k + 1) * W, L::load(zi + k * W));
        }
      }
    }
    // The strided write of the planes is this pass's store: no separate transpose.
    if (in_line == sweep - 1 || r == r1 - 1) {
      const int64_t first = r - in_line;
      deinterleave<V>(s.line, (in_line + 1) * cols, real + first * cols * at.element, at, lanes);
    }
  }
}

template <class V>
void inverse_rows(const OwnFftPlan& plan, const OwnFftScratch& s, float* real, OwnFftRealLayout at,
                  int lanes, int64_t r0, int64_t r1) {
  with_codelet(plan.cols / 2,
               [&](auto m) { inverse_rows_n<V, m()>(plan, s, real, at, lanes, r0, r1); });
}

// Forward r2c of one group of `lanes` <= W planes: every phase over its whole range.
template <class V>
void forward_group(const OwnFftPlan& plan, const OwnFftScratch& s, const float* real,
                   OwnFftRealLayout at, cfloat* spectrum, int64_t complex_stride, int lanes) {
  forward_rows<V>(plan, s, real, at, lanes, 0, plan.rows);
  transform_columns<V, false>(plan, s, 0, plan.cols / 2 + 1);
  store_rows<V>(plan, s, spectrum, complex_stride, lanes, 0, plan.rows);
}

// Inverse c2r of one group of `lanes` <= W planes.
template <class V>
void inverse_group(const OwnFftPlan& plan, const OwnFftScratch& s, const cfloat* spectrum,
                   int64_t complex_stride, float* real, OwnFftRealLayout at, int lanes) {
  load_rows<V>(plan, s, spectrum, complex_stride, lanes, 0, plan.rows);
  transform_columns<V, true>(plan, s, 0, plan.cols / 2 + 1);
  inverse_rows<V>(plan, s, real, at, lanes, 0, plan.rows);
}

// Small planes are read and written in a strided order (row r of eight planes at a time)
// that the hardware prefetchers follow poorly once a batch outgrows the caches, so each
// group fetches the next group's input while it computes (at 8x8, batch 16384: 6.6 ms ->
// ~4 ms on a loaded 2-core VM; fetching further ahead did not help). The forward
// transform also fetches the next group's spectra for writing: with the fixed-length
// codelets the compute got short enough that the stores' misses showed (10x10, batch
// 16384: 0.79-0.86x FFTW's time against 1.17-1.45x without, docs/BENCHMARKS.md); the
// inverse fetches the next group's spectra. The fetches go to L2, not L1 (prefetcht1,
// locality 2): out of the last-level cache, fetching into L1 was 1.1-1.9x slower at
// 10x10-16x16 (batch 16384-32768, quiet, docs/BENCHMARKS.md), as many lines in flight
// at once crowd L1 while the current group still works there. Only groups up to
// kPrefetchBytes: larger planes are streams the hardware follows.
constexpr int64_t kPrefetchBytes = int64_t{32} << 10;

template <bool ForWriting = false>
void prefetch_span(const void* p, int64_t bytes) {
  if (bytes > kPrefetchBytes) return;
  const char* c = static_cast<const char*>(p);
  for (int64_t i = 0; i < bytes; i += 64) __builtin_prefetch(c + i, ForWriting ? 1 : 0, 2);
}

// Streamed calls (OwnFftStore::streamed): once a call's planes and spectra outgrow the
// last-level cache, every output line costs a read for ownership before it is written,
// and eight planes written a few rows at a time are eight short streams. Full groups of
// small planes therefore write their output to scratch.stage and copy it out in address
// order with non-temporal stores of whole 64-byte lines: no read for ownership, one
// stream. Measured in two quiet rounds (docs/BENCHMARKS.md, batch 16384, own/FFTW time,
// cached -> streamed): 12x12 inverse 1.46 and 1.22 -> 1.09 and 1.04 on one thread, 1.25
// and 0.99 -> 0.77 on two; 10x10-20x20 0.55-1.01 -> 0.55-0.88. At 8x8 (9.4 MB, part
// of it stays cached between calls) and in cache it was slower, hence the size
// threshold in OwnFft2d::store_for. Only groups up to kStreamMaxGroupBytes: at 32x32 a
// plane is a stream the hardware follows, and the inverse lost (0.47-0.53 -> 0.55-0.60).
// Non-temporal stores of 32 bytes straight from the row pass to eight planes were
// 1.5-6x slower: partial lines.
constexpr int64_t kStreamMaxGroupBytes = int64_t{16} << 10;
[[gnu::always_inline]] inline void stream_copy(const float* src, float* dst, int64_t n) {
#if defined(__SSE__)
  int64_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(dst + i) & 63) != 0; ++i) dst[i] = src[i];
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; k += 4) _mm_stream_ps(dst + i + k, _mm_loadu_ps(src + i + k));
  for (; i < n; ++i) dst[i] = src[i];
#else
  __builtin_memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
#endif
}

// Non-temporal stores are weakly ordered: they must be globally visible before the call
// returns and another thread reads the output.
[[gnu::always_inline]] inline void stream_fence() {
#if defined(__SSE__)
  _mm_sfence();
#endif
}

// Copies `lanes` planes of `plane` floats from the stage (back to back) to dst, `stride`
// floats apart: one stream when they are back to back there too.
inline void stream_planes(const float* stage, int64_t plane, float* dst, int64_t stride,
                          int lanes) {
  if (stride == plane) return stream_copy(stage, dst, lanes * plane);
  for (int l = 0; l < lanes; ++l) stream_copy(stage + l * plane, dst + l * stride, plane);
}

// One plane alone on the vector path (see OwnFftPlanePhases); defined below.
template <class V>
void forward_plane(const OwnFftPlan& plan, const OwnFftScratch& s, const float* real,
                   OwnFftRealLayout at, cfloat* spectrum);
template <class V>
void inverse_plane(const OwnFftPlan& plan, const OwnFftScratch& s, const cfloat* spectrum,
                   float* real, OwnFftRealLayout at);

// Every plane of a call, in the groups own_fft_group_lanes() gives: full and partial
// groups on the lane type V, single planes on float.
template <class V>
void forward_planes(const OwnFftPlan& plan, const OwnFftScratch& s, const float* real,
                    OwnFftRealLayout at, cfloat* spectrum, int64_t complex_stride, int64_t count,
                    bool streamed = false) {
  constexpr int W = Lanes<V>::W;
  // The floats one group of W planes spans, from its first element to its last.
  const int64_t group_span = (W - 1) * at.plane + (plan.rows * plan.cols - 1) * at.element + 1;
  const int64_t bins = plan.rows * (plan.cols / 2 + 1),
                spectra_bytes = W * complex_stride * int64_t{sizeof(cfloat)};
  streamed = streamed && W > 1 && spectra_bytes <= kStreamMaxGroupBytes;
  for (int64_t i = 0; i < count;) {
    const int lanes = own_fft_group_lanes(W, count - i, plan);
    if (W > 1 && lanes == W && i + 2 * W <= count) {
      prefetch_span(real + (i + W) * at.plane, group_span * int64_t{sizeof(float)});
      if (!streamed) prefetch_span<true>(spectrum + (i + W) * complex_stride, spectra_bytes);
    }
    if (streamed && lanes == W) {
      forward_group<V>(plan, s, real + i * at.plane, at, reinterpret_cast<cfloat*>(s.stage), bins,
                       lanes);
      stream_planes(s.stage, 2 * bins, reinterpret_cast<float*>(spectrum + i * complex_stride),
                    2 * complex_stride, lanes);
    } else if (lanes > 1)
      forward_group<V>(plan, s, real + i * at.plane, at, spectrum + i * complex_stride,
                       complex_stride, lanes);
    else if (own_fft_plane_vectorises(W, plan))
      forward_plane<V>(plan, s, real + i * at.plane, at, spectrum + i * complex_stride);
    else
      forward_group<float>(plan, s, real + i * at.plane, at, spectrum + i * complex_stride,
                           complex_stride, 1);
    i += lanes;
  }
  if (streamed) stream_fence();
}

template <class V>
void inverse_planes(const OwnFftPlan& plan, const OwnFftScratch& s, const cfloat* spectrum,
                    int64_t complex_stride, float* real, OwnFftRealLayout at, int64_t count,
                    bool streamed = false) {
  constexpr int W = Lanes<V>::W;
  const int64_t points = plan.rows * plan.cols;
  // Interleaved planes (element > 1) share every line with other planes: no whole lines.
  streamed = streamed && W > 1 && at.element == 1 &&
             W * points * int64_t{sizeof(float)} <= kStreamMaxGroupBytes;
  for (int64_t i = 0; i < count;) {
    const int lanes = own_fft_group_lanes(W, count - i, plan);
    if (W > 1 && lanes == W && i + 2 * W <= count)
      prefetch_span(spectrum + (i + W) * complex_stride,
                    W * complex_stride * int64_t{sizeof(cfloat)});
    if (streamed && lanes == W) {
      inverse_group<V>(plan, s, spectrum + i * complex_stride, complex_stride, s.stage, {points, 1},
                       lanes);
      stream_planes(s.stage, points, real + i * at.plane, at.plane, lanes);
    } else if (lanes > 1)
      inverse_group<V>(plan, s, spectrum + i * complex_stride, complex_stride, real + i * at.plane,
                       at, lanes);
    else if (own_fft_plane_vectorises(W, plan))
      inverse_plane<V>(plan, s, spectrum + i * complex_stride, real + i * at.plane, at);
    else
      inverse_group<float>(plan, s, spectrum + i * complex_stride, complex_stride,
                           real + i * at.plane, at, 1);
    i += lanes;
  }
  if (streamed) stream_fence();
}

// One plane alone on the vector path (own_fft_plane_vectorises): a plane left over
// after the groups would otherwise run on scalar code (a quarter of the vector speed).

// [first, last) of units u0..u1 of W over n.
template <class V>
void unit_range(int64_t u0, int64_t u1, int64_t n, int64_t& first, int64_t& last) {
  constexpr int W = Lanes<V>::W;
  first = u0 * W;
  last = u1 * W < n ? u1 * W : n;
}

// r2c of rows [u0 W, u1 W) of the plane: its rows are the planes of a 1 x cols batch.
template <class V>
void plane_forward_rows(const OwnFftPlan& plan, const OwnFftScratch& s, const float* real,
                        OwnFftRealLayout at, cfloat* spectrum, int64_t u0, int64_t u1) {
  int64_t r0, r1;
  unit_range<V>(u0, u1, plan.rows, r0, r1);
  const int64_t half = plan.cols / 2 + 1, row = plan.cols * at.element;
  forward_planes<V>(*plan.rows_plan, s, real + r0 * row, {row, at.element}, spectrum + r0 * half,
                    half, r1 - r0);
}

// Complex FFT down the columns k .. k + W of one plane's row-major half spectrum `bins`
// (interleaved re/im), in place: W adjacent columns are one vector per row.
template <class V, bool Inverse>
void plane_column_block(const OwnFftPlan& plan, const OwnFftScratch& s, float* bins) {
  using L = Lanes<V>;
  constexpr int W = L::W;
  const int64_t rows = plan.rows, half = plan.cols / 2 + 1;
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = bins + 2 * r * half;
    if constexpr (W == 8) {
      const V a = L::load(p), b = L::load(p + 8);
      L::store(s.xr + r * W, __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14));
      L::store(s.xi + r * W, __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15));
    } else {
      s.xr[r] = p[0], s.xi[r] = p[1];
    }
  }
  const bool in_y = complex_fft<V, Inverse>(rows, plan.col, s.xr, s.xi, s.yr, s.yi);
  const float* zr = in_y ? s.yr : s.xr;
  const float* zi = in_y ? s.yi : s.xi;
  for (int64_t r = 0; r < rows; ++r) {
    float* p = bins + 2 * r * half;
    if constexpr (W == 8) {
      const V re = L::load(zr + r * W), im = L::load(zi + r * W);
      L::store(p, __builtin_shufflevector(re, im, 0, 8, 1, 9, 2, 10, 3, 11));
      L::store(p + 8, __builtin_shufflevector(re, im, 4, 12, 5, 13, 6, 14, 7, 15));
    } else {
      p[0] = zr[r], p[1] = zi[r];
    }
  }
}

// Columns [u0 W, u1 W) of the plane's half spectrum, in place; the last unit's leftover
// columns one at a time.
template <class V, bool Inverse>
void plane_columns(const OwnFftPlan& plan, const OwnFftScratch& s, float* bins, int64_t u0,
                   int64_t u1) {
  constexpr int W = Lanes<V>::W;
  if (plan.rows == 1) return;
  int64_t k, k1;
  unit_range<V>(u0, u1, plan.cols / 2 + 1, k, k1);
  for (; k + W <= k1; k += W) plane_column_block<V, Inverse>(plan, s, bins + 2 * k);
  for (; k < k1; ++k) plane_column_block<float, Inverse>(plan, s, bins + 2 * k);
}

template <class V>
void plane_forward_columns(const OwnFftPlan& plan, const OwnFftScratch& s, cfloat* spectrum,
                           int64_t u0, int64_t u1) {
  plane_columns<V, false>(plan, s, reinterpret_cast<float*>(spectrum), u0, u1);
}

// Spectrum rows [u0 W, u1 W) into the copy the inverse transforms.
template <class V>
void plane_load(const OwnFftPlan& plan, const OwnFftScratch& s, const cfloat* spectrum, int64_t u0,
                int64_t u1) {
  int64_t r0, r1;
  unit_range<V>(u0, u1, plan.rows, r0, r1);
  const int64_t half = plan.cols / 2 + 1;
  __builtin_memcpy(s.plane + 2 * r0 * half, spectrum + r0 * half,
                   static_cast<size_t>(r1 - r0) * static_cast<size_t>(half) * sizeof(cfloat));
}

template <class V>
void plane_inverse_columns(const OwnFftPlan& plan, const OwnFftScratch& s, int64_t u0, int64_t u1) {
  plane_columns<V, true>(plan, s, s.plane, u0, u1);
}

// c2r of rows [u0 W, u1 W) of the copy into the plane.
template <class V>
void plane_inverse_rows(const OwnFftPlan& plan, const OwnFftScratch& s, float* real,
                        OwnFftRealLayout at, int64_t u0, int64_t u1) {
  int64_t r0, r1;
  unit_range<V>(u0, u1, plan.rows, r0, r1);
  const int64_t half = plan.cols / 2 + 1, row = plan.cols * at.element;
  inverse_planes<V>(*plan.rows_plan, s, reinterpret_cast<const cfloat*>(s.plane) + r0 * half, half,
                    real + r0 * row, {row, at.element}, r1 - r0);
}

template <class V>
void forward_plane(const OwnFftPlan& plan, const OwnFftScratch& s, const float* real,
                   OwnFftRealLayout at, cfloat* spectrum) {
  constexpr int W = Lanes<V>::W;
  plane_forward_rows<V>(plan, s, real, at, spectrum, 0, (plan.rows + W - 1) / W);
  plane_forward_columns<V>(plan, s, spectrum, 0, (plan.cols / 2 + 1 + W - 1) / W);
}

template <class V>
void inverse_plane(const OwnFftPlan& plan, const OwnFftScratch& s, const cfloat* spectrum,
                   float* real, OwnFftRealLayout at) {
  constexpr int W = Lanes<V>::W;
  const int64_t row_units = (plan.rows + W - 1) / W;
  plane_load<V>(plan, s, spectrum, 0, row_units);
  plane_inverse_columns<V>(plan, s, 0, (plan.cols / 2 + 1 + W - 1) / W);
  plane_inverse_rows<V>(plan, s, real, at, 0, row_units);
}

template <class V>
constexpr OwnFftPlanePhases plane_phases() {
  return {&plane_forward_rows<V>, &plane_forward_columns<V>, &plane_load<V>,
          &plane_inverse_columns<V>, &plane_inverse_rows<V>};
}

template <class V>
constexpr OwnFftGroupPhases group_phases() {
  return {Lanes<V>::W,
          &forward_rows<V>,
          &transform_columns<V, false>,
          &transform_columns<V, true>,
          &store_rows<V>,
          &load_rows<V>,
          &inverse_rows<V>};
}

template <class V>
constexpr OwnFftKernelTable kernel_table() {
  return {&forward_planes<V>, &inverse_planes<V>, group_phases<V>(), group_phases<float>(),
          plane_phases<V>()};
}

}  // namespace
}  // namespace tunescope::cpu
