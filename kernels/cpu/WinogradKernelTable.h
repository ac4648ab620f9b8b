// What the Winograd convolution (ConvWinograd.cpp) hands its per-instruction-set
// transform kernels (WinogradKernels.h): plain structs of sizes and pointers, so nothing
// with external linkage crosses into code compiled for another instruction set, and the
// three kernel tables they export.
//
// Every pass runs as a forward-like convolution of an `in` tensor (x, or dy for backward
// data) to an `out` tensor, cut into output tiles of m x m (F(m x m, 3 x 3), alpha =
// m + 2). Tile t counts n, then tile row, then tile column. A wave is a range of tiles
// whose transforms are live at once; per wave the transformed domain holds alpha^2
// matrices, one per point a, of `channels` x wave tiles:
//   NCHW: element (a, c, t) at (a * channels + c) * count + t    (tiles contiguous)
//   NHWC: element (a, c, t) at (a * count + t) * channels + c    (channels contiguous)
// so every GEMM reads and writes them with unit stride along its long dimension.
#pragma once

#include <cstdint>

namespace tunescope::cpu {

struct WinogradGeometry {
  int64_t n = 0;
  int64_t in_c = 0, in_h = 0, in_w = 0;
  int64_t out_c = 0, out_h = 0, out_w = 0;
  // Output pixel (p, q) reads input rows p - pad_h .. p - pad_h + 2 (columns alike);
  // negative for backward data of a problem padded by more than 2.
  int64_t pad_h = 0, pad_w = 0;
  int64_t tiles_h = 0, tiles_w = 0;  // ceil(out / m)
  bool nhwc = false;
};

// Tiles [first, first + count) of the pass. Their transformed-domain matrices have `stride`
// tiles per point (0: count), the `count` of the layouts above: the fused schedule pads
// it to an odd number so that the alpha^2 vectors of one tile, a point's row apart, do
// not all fall into a few L1 sets (48 tiles of 16 channels: 3 KiB apart, 4 sets).
struct WinogradWave {
  int64_t first = 0, count = 0, stride = 0;
  int64_t ld() const { return stride ? stride : count; }
};

// Each kernel handles wave-relative tiles [begin, end) for every channel.
struct WinogradTileKernels {
  // v = B^T d B of the alpha x alpha input patches of `in` (padding reads zero).
  void (*input)(const WinogradGeometry&, const float* in, WinogradWave, int64_t begin, int64_t end,
                float* v);
  // out = A^T m A, the m x m output tiles (what overhangs the output is dropped).
  void (*output)(const WinogradGeometry&, const float* m, WinogradWave, int64_t begin, int64_t end,
                 float* out);
  // dm = A e A^T of the m x m tiles e of `out`-shaped dy (backward filter; overhang
  // reads zero): the adjoint of `output`.
  void (*output_adjoint)(const WinogradGeometry&, const float* dy, WinogradWave, int64_t begin,
                         int64_t end, float* dm);
};

// One small matrix product of the fused schedule (ConvWinograd.cpp), out = (accumulate ?
// out : 0) + A B with A rows x depth, element (i, p) at a[i * a_row + p * a_depth] (so A
// may be a transposed view), B depth x cols row-major (ldb) and out rows x cols
// row-major (ldc). Sized for transformed-domain blocks that stay in cache: channels up to
// a few hundred, tens of tiles.
struct WinogradGemmArgs {
  int64_t rows = 0, cols = 0, depth = 0;
  const float* a = nullptr;
  int64_t a_row = 0, a_depth = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float* out = nullptr;
  int64_t ldc = 0;
  bool accumulate = false;
};

struct WinogradKernelTable {
  int lanes = 1;  // tiles (NCHW) or channels (NHWC) per vector
  WinogradTileKernels f2, f4;
  void (*gemm)(const WinogradGemmArgs&) = nullptr;
};

extern const WinogradKernelTable kWinogradScalarKernels;
extern const WinogradKernelTable kWinogradAvx2Kernels;
extern const WinogradKernelTable kWinogradAvx512Kernels;

}  // namespace tunescope::cpu
