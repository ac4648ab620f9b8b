// The Winograd transform kernels, written once over a vector of W lanes and compiled once
// per instruction set (WinogradScalar.cpp, WinogradAvx2.cpp, WinogradAvx512.cpp, each
// with its own -march). Everything here has internal linkage: an inline function with
// external linkage compiled for AVX-512 in one file could be the copy the linker keeps
// for the scalar path of another.
//
// The 1-D transforms of F(2, 3) and F(4, 3) (Lavin & Gray 2016, interpolation points 0,
// +-1 and 0, +-1, +-2, plus infinity); the 2-D ones apply them along columns, then rows.
// The filter transform G g G^T runs once per pass on few values and lives in
// ConvWinograd.cpp with the same points.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/cpu/WinogradKernelTable.h"

namespace tunescope::cpu {
namespace {

template <int W>
struct WinogradVec;
template <>
struct WinogradVec<1> {
  using type = float;
};
template <>
struct WinogradVec<8> {
  typedef float type __attribute__((vector_size(32)));
};
template <>
struct WinogradVec<16> {
  typedef float type __attribute__((vector_size(64)));
};

// Not std::min: a template with external linkage instantiated here is one the linker
// may share with a file built for another instruction set (see above).
inline int64_t wg_min(int64_t a, int64_t b) { return a < b ? a : b; }

template <class V>
inline V wg_load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
inline void wg_store(float* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// F(2x2, 3x3): 4-point transforms. d -> B^T d, m -> A^T m, e -> A e.
struct WinogradF2 {
  static constexpr int m = 2, alpha = 4;
  template <class V>
  static void input(const V* d, int ds, V* o, int os) {
    o[0] = d[0] - d[2 * ds];
    o[os] = d[ds] + d[2 * ds];
    o[2 * os] = d[2 * ds] - d[ds];
    o[3 * os] = d[ds] - d[3 * ds];
  }
  template <class V>
  static void output(const V* x, int xs, V* o, int os) {
    o[0] = x[0] + x[xs] + x[2 * xs];
    o[os] = x[xs] - x[2 * xs] - x[3 * xs];
  }
  template <class V>
  static void output_adjoint(const V* e, int es, V* o, int os) {
    o[0] = e[0];
    o[os] = e[0] + e[es];
    o[2 * os] = e[0] - e[es];
    o[3 * os] = -e[es];
  }
};

// F(4x4, 3x3): 6-point transforms, with the common subexpressions of the rows shared.
struct WinogradF4 {
  static constexpr int m = 4, alpha = 6;
  template <class V>
  static void input(const V* d, int ds, V* o, int os) {
    const V d0 = d[0], d1 = d[ds], d2 = d[2 * ds], d3 = d[3 * ds], d4 = d[4 * ds], d5 = d[5 * ds];
    const V a = d4 - 4.0f * d2, b = d3 - 4.0f * d1, c = d4 - d2, e = 2.0f * (d3 - d1);
    o[0] = 4.0f * d0 - 5.0f * d2 + d4;
    o[os] = a + b;
    o[2 * os] = a - b;
    o[3 * os] = c + e;
    o[4 * os] = c - e;
    o[5 * os] = 4.0f * d1 - 5.0f * d3 + d5;
  }
  template <class V>
  static void output(const V* x, int xs, V* o, int os) {
    const V s12 = x[xs] + x[2 * xs], d12 = x[xs] - x[2 * xs];
    const V s34 = x[3 * xs] + x[4 * xs], d34 = x[3 * xs] - x[4 * xs];
    o[0] = x[0] + s12 + s34;
    o[os] = d12 + 2.0f * d34;
    o[2 * os] = s12 + 4.0f * s34;
    o[3 * os] = d12 + 8.0f * d34 + x[5 * xs];
  }
  template <class V>
  static void output_adjoint(const V* e, int es, V* o, int os) {
    const V e0 = e[0], e1 = e[es], e2 = e[2 * es], e3 = e[3 * es];
    const V s02 = e0 + e2, s13 = e1 + e3;
    const V t02 = e0 + 4.0f * e2, t13 = 2.0f * e1 + 8.0f * e3;
    o[0] = e0;
    o[os] = s02 + s13;
    o[2 * os] = s02 - s13;
    o[3 * os] = t02 + t13;
    o[4 * os] = t02 - t13;
    o[5 * os] = e3;
  }
};

// The 2-D transforms on an n x n block of vectors (row-major) to a k x k one.
template <class Tile, class V>
inline void wg_input_2d(const V* in, V* out) {
  constexpr int a = Tile::alpha;
  V tmp[a * a];
  for (int j = 0; j < a; ++j) Tile::input(in + j, a, tmp + j, a);
  for (int i = 0; i < a; ++i) Tile::input(tmp + i * a, 1, out + i * a, 1);
}
template <class Tile, class V>
inline void wg_output_2d(const V* in, V* out) {
  constexpr int a = Tile::alpha, m = Tile::m;
  V tmp[m * a];
  for (int j = 0; j < a; ++j) Tile::output(in + j, a, tmp + j, a);
  for (int i = 0; i < m; ++i) Tile::output(tmp + i * a, 1, out + i * m, 1);
}
template <class Tile, class V>
inline void wg_output_adjoint_2d(const V* in, V* out) {
  constexpr int a = Tile::alpha, m = Tile::m;
  V tmp[a * m];
  for (int j = 0; j < m; ++j) Tile::output_adjoint(in + j, m, tmp + j, m);
  for (int i = 0; i < a; ++i) Tile::output_adjoint(tmp + i * m, 1, out + i * a, 1);
}

// Where tile t (pass-wide index) lies: image n, output origin (oh, ow).
struct WinogradTilePos {
  int64_t n, oh, ow;
};
inline WinogradTilePos wg_tile_pos(const WinogradGeometry& g, int64_t t, int m) {
  const int64_t per_image = g.tiles_h * g.tiles_w;
  const int64_t rem = t % per_image;
  return {t / per_image, rem / g.tiles_w * m, rem % g.tiles_w * m};
}

// One image tensor of the pass seen by logical index, in either layout.
struct WinogradTensorView {
  int64_t c, h, w;
  bool nhwc;
  int64_t plane_offset(int64_t n, int64_t ch) const {  // NCHW: start of plane (n, ch)
    return (n * c + ch) * h * w;
  }
  int64_t pixel_offset(int64_t n, int64_t row, int64_t col) const {  // NHWC: start of pixel
    return ((n * h + row) * w + col) * c;
  }
};

// Reads the S x S patches at (oh + dh, ow + dw) of every channel of `src` (zero outside
// it), transforms each with Forward (S x S -> alpha x alpha) and stores the result at
// point-major position (a, c, t) of `dst` (layout in WinogradKernelTable.h).
template <int W, int S, int Alpha, class Forward>
void wg_patches_to_points(const WinogradGeometry& g, const WinogradTensorView& src, const float* in,
                          int m, int64_t dh, int64_t dw, WinogradWave wave, int64_t begin,
                          int64_t end, float* dst, Forward forward) {
  using V = typename WinogradVec<W>::type;
  const int64_t C = src.c, ld = wave.ld();
  if (!g.nhwc) {
    // Lanes are W consecutive tiles; each lane gathers its own patch.
    alignas(64) float patch[S * S][W] = {};
    for (int64_t t0 = begin; t0 < end; t0 += W) {
      const int lanes = static_cast<int>(wg_min(W, end - t0));
      WinogradTilePos pos[W];
      bool inside[W];
      for (int l = 0; l < lanes; ++l) {
        pos[l] = wg_tile_pos(g, wave.first + t0 + l, m);
        pos[l].oh += dh;
        pos[l].ow += dw;
        inside[l] =
            pos[l].oh >= 0 && pos[l].oh + S <= src.h && pos[l].ow >= 0 && pos[l].ow + S <= src.w;
      }
      for (int64_t c = 0; c < C; ++c) {
        for (int l = 0; l < lanes; ++l) {
          const float* plane = in + src.plane_offset(pos[l].n, c);
          const int64_t oh = pos[l].oh, ow = pos[l].ow;
          if (inside[l]) {
            for (int i = 0; i < S; ++i)
              for (int j = 0; j < S; ++j) patch[i * S + j][l] = plane[(oh + i) * src.w + ow + j];
          } else {
            for (int i = 0; i < S; ++i)
              for (int j = 0; j < S; ++j) {
                const int64_t r = oh + i, q = ow + j;
                patch[i * S + j][l] =
                    r >= 0 && r < src.h && q >= 0 && q < src.w ? plane[r * src.w + q] : 0.0f;
              }
          }
        }
        V d[S * S], o[Alpha * Alpha];
        for (int e = 0; e < S * S; ++e) d[e] = wg_load<V>(patch[e]);
        forward(d, o);
        float* out = dst + c * ld + t0;
        if (lanes == W) {
          for (int a = 0; a < Alpha * Alpha; ++a) wg_store(out + a * C * ld, o[a]);
        } else {
          for (int a = 0; a < Alpha * Alpha; ++a) {
            alignas(64) float lane_values[W];
            wg_store(lane_values, o[a]);
            std::memcpy(out + a * C * ld, lane_values, sizeof(float) * lanes);
          }
        }
      }
    }
    return;
  }
  // NHWC: lanes are W consecutive channels of one tile.
  for (int64_t t = begin; t < end; ++t) {
    WinogradTilePos pos = wg_tile_pos(g, wave.first + t, m);
    pos.oh += dh;
    pos.ow += dw;
    for (int64_t c0 = 0; c0 < C; c0 += W) {
      const int lanes = static_cast<int>(wg_min(W, C - c0));
      V d[S * S], o[Alpha * Alpha];
      for (int i = 0; i < S; ++i)
        for (int j = 0; j < S; ++j) {
          const int64_t r = pos.oh + i, q = pos.ow + j;
          if (r < 0 || r >= src.h || q < 0 || q >= src.w) {
            d[i * S + j] = V{};
          } else if (lanes == W) {
            d[i * S + j] = wg_load<V>(in + src.pixel_offset(pos.n, r, q) + c0);
          } else {
            alignas(64) float lane_values[W] = {};
            std::memcpy(lane_values, in + src.pixel_offset(pos.n, r, q) + c0,
                        sizeof(float) * lanes);
            d[i * S + j] = wg_load<V>(lane_values);
          }
        }
      forward(d, o);
      float* out = dst + t * C + c0;
      for (int a = 0; a < Alpha * Alpha; ++a) {
        if (lanes == W) {
          wg_store(out + a * ld * C, o[a]);
        } else {
          alignas(64) float lane_values[W];
          wg_store(lane_values, o[a]);
          std::memcpy(out + a * ld * C, lane_values, sizeof(float) * lanes);
        }
      }
    }
  }
}

template <class Tile, int W>
void wg_input(const WinogradGeometry& g, const float* in, WinogradWave wave, int64_t begin,
              int64_t end, float* v) {
  using V = typename WinogradVec<W>::type;
  const WinogradTensorView src{g.in_c, g.in_h, g.in_w, g.nhwc};
  wg_patches_to_points<W, Tile::alpha, Tile::alpha>(
      g, src, in, Tile::m, -g.pad_h, -g.pad_w, wave, begin, end, v,
      [](const V* d, V* o) { wg_input_2d<Tile>(d, o); });
}

template <class Tile, int W>
void wg_output_adjoint(const WinogradGeometry& g, const float* dy, WinogradWave wave, int64_t begin,
                       int64_t end, float* dm) {
  using V = typename WinogradVec<W>::type;
  const WinogradTensorView src{g.out_c, g.out_h, g.out_w, g.nhwc};
  wg_patches_to_points<W, Tile::m, Tile::alpha>(
      g, src, dy, Tile::m, 0, 0, wave, begin, end, dm,
      [](const V* e, V* o) { wg_output_adjoint_2d<Tile>(e, o); });
}

// out = A^T m A for every output channel of tiles [begin, end); only the pixels inside
// the output are written.
template <class Tile, int W>
void wg_output(const WinogradGeometry& g, const float* mt, WinogradWave wave, int64_t begin,
               int64_t end, float* out) {
  using V = typename WinogradVec<W>::type;
  constexpr int m = Tile::m, A2 = Tile::alpha * Tile::alpha;
  const int64_t K = g.out_c, ld = wave.ld();
  const WinogradTensorView dst{g.out_c, g.out_h, g.out_w, g.nhwc};
  if (!g.nhwc) {
    for (int64_t t0 = begin; t0 < end; t0 += W) {
      const int lanes = static_cast<int>(wg_min(W, end - t0));
      WinogradTilePos pos[W];
      for (int l = 0; l < lanes; ++l) pos[l] = wg_tile_pos(g, wave.first + t0 + l, m);
      for (int64_t k = 0; k < K; ++k) {
        V x[A2], o[m * m];
        const float* src = mt + k * ld + t0;
        for (int a = 0; a < A2; ++a) {
          if (lanes == W) {
            x[a] = wg_load<V>(src + a * K * ld);
          } else {
            alignas(64) float lane_values[W] = {};
            std::memcpy(lane_values, src + a * K * ld, sizeof(float) * lanes);
            x[a] = wg_load<V>(lane_values);
          }
        }
        wg_output_2d<Tile>(x, o);
        alignas(64) float values[m * m][W];
        for (int e = 0; e < m * m; ++e) wg_store(values[e], o[e]);
        for (int l = 0; l < lanes; ++l) {
          float* plane = out + dst.plane_offset(pos[l].n, k);
          const int rows = static_cast<int>(wg_min(m, g.out_h - pos[l].oh));
          const int cols = static_cast<int>(wg_min(m, g.out_w - pos[l].ow));
          for (int i = 0; i < rows; ++i)
            for (int j = 0; j < cols; ++j)
              plane[(pos[l].oh + i) * g.out_w + pos[l].ow + j] = values[i * m + j][l];
        }
      }
    }
    return;
  }
  for (int64_t t = begin; t < end; ++t) {
    const WinogradTilePos pos = wg_tile_pos(g, wave.first + t, m);
    const int rows = static_cast<int>(wg_min(m, g.out_h - pos.oh));
    const int cols = static_cast<int>(wg_min(m, g.out_w - pos.ow));
    for (int64_t k0 = 0; k0 < K; k0 += W) {
      const int lanes = static_cast<int>(wg_min(W, K - k0));
      V x[A2], o[m * m];
      const float* src = mt + t * K + k0;
      for (int a = 0; a < A2; ++a) {
        if (lanes == W) {
          x[a] = wg_load<V>(src + a * ld * K);
        } else {
          alignas(64) float lane_values[W] = {};
          std::memcpy(lane_values, src + a * ld * K, sizeof(float) * lanes);
          x[a] = wg_load<V>(lane_values);
        }
      }
      wg_output_2d<Tile>(x, o);
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) {
          float* pixel = out + dst.pixel_offset(pos.n, pos.oh + i, pos.ow + j) + k0;
          if (lanes == W) {
            wg_store(pixel, o[i * m + j]);
          } else {
            alignas(64) float lane_values[W];
            wg_store(lane_values, o[i * m + j]);
            std::memcpy(pixel, lane_values, sizeof(float) * lanes);
          }
        }
    }
  }
}

// The register block of the fused schedule's products: RB rows of A times CB vectors of
// B's columns, all RB x CB sums in registers across the whole depth (one broadcast of A
// and CB loads of B per step). Blocks for 16 (scalar, AVX2) or 32 (AVX-512) registers.
template <int W, int CB>
constexpr int wg_gemm_rows() {
  if constexpr (W == 16) return CB == 1 ? 12 : CB == 2 ? 8 : 6;
  if constexpr (W == 8) return CB == 1 ? 8 : CB == 2 ? 6 : 2;
  return 4;
}

template <int W, int RB, int CB>
void wg_gemm_block(const WinogradGemmArgs& g, int64_t i0, int64_t j0) {
  using V = typename WinogradVec<W>::type;
  V acc[RB][CB];
  for (int r = 0; r < RB; ++r)
    for (int j = 0; j < CB; ++j)
      acc[r][j] = g.accumulate ? wg_load<V>(g.out + (i0 + r) * g.ldc + j0 + j * W) : V{};
  const float* a = g.a + i0 * g.a_row;
  const float* b = g.b + j0;
  for (int64_t p = 0; p < g.depth; ++p) {
    V bv[CB];
    for (int j = 0; j < CB; ++j) bv[j] = wg_load<V>(b + p * g.ldb + j * W);
    for (int r = 0; r < RB; ++r) {
      const float ar = a[r * g.a_row + p * g.a_depth];
      for (int j = 0; j < CB; ++j) acc[r][j] += ar * bv[j];
    }
  }
  for (int r = 0; r < RB; ++r)
    for (int j = 0; j < CB; ++j) wg_store(g.out + (i0 + r) * g.ldc + j0 + j * W, acc[r][j]);
}

// Columns [j0, j0 + CB * W) of every row: full row blocks, then the rest in blocks of 4,
// 2 and 1 rows.
template <int W, int CB>
void wg_gemm_columns(const WinogradGemmArgs& g, int64_t j0) {
  constexpr int RB = wg_gemm_rows<W, CB>();
  int64_t i = 0;
  for (; i + RB <= g.rows; i += RB) wg_gemm_block<W, RB, CB>(g, i, j0);
  if constexpr (RB > 4)
    for (; i + 4 <= g.rows; i += 4) wg_gemm_block<W, 4, CB>(g, i, j0);
  if constexpr (RB > 2)
    for (; i + 2 <= g.rows; i += 2) wg_gemm_block<W, 2, CB>(g, i, j0);
  for (; i < g.rows; ++i) wg_gemm_block<W, 1, CB>(g, i, j0);
}

template <int W>
void wg_gemm(const WinogradGemmArgs& g) {
  int64_t j = 0;
  for (; j + 4 * W <= g.cols; j += 4 * W) wg_gemm_columns<W, 4>(g, j);
  if (j + 2 * W <= g.cols) {
    wg_gemm_columns<W, 2>(g, j);
    j += 2 * W;
  }
  for (; j + W <= g.cols; j += W) wg_gemm_columns<W, 1>(g, j);
  if constexpr (W > 1)
    for (; j < g.cols; ++j) wg_gemm_columns<1, 1>(g, j);  // what fills no vector
}

template <int W>
WinogradKernelTable winograd_kernel_table() {
  WinogradKernelTable table;
  table.lanes = W;
  table.f2 = {wg_input<WinogradF2, W>, wg_output<WinogradF2, W>, wg_output_adjoint<WinogradF2, W>};
  table.f4 = {wg_input<WinogradF4, W>, wg_output<WinogradF4, W>, wg_output_adjoint<WinogradF4, W>};
  table.gemm = wg_gemm<W>;
  return table;
}

}  // namespace
}  // namespace tunescope::cpu
