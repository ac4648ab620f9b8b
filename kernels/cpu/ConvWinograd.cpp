// The "winograd" convolution algorithm (see ConvWinograd.h): planning, the filter
// transforms, the batched sgemms in the transformed domain and the passes.
#include "kernels/cpu/ConvWinograd.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <memory>

#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/WinogradKernelTable.h"
#include "kernels/shared/ConvArgs.h"
#include "kernels/shared/WorkspaceLayout.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {
namespace {

// The transforms of one wave stay below this, so sgemm reads what the input transform
// wrote (and the output transform what sgemm wrote) from cache rather than memory.
constexpr int64_t kWaveBudgetBytes = 8 << 20;
// Fewer tiles per wave make sgemms too narrow to run at speed; such waves exceed the budget.
constexpr int64_t kMinWaveTiles = 64;
// sgemm items narrower than this (tiles or filter rows) lose more to call overhead than
// they gain in balance.
constexpr int64_t kMinGemmColumns = 64;
constexpr int64_t kMinGemmRows = 16;
// Problems whose transformed filters and one wave need more are refused (this also keeps
// every sgemm dimension within int).
constexpr size_t kMaxWorkspaceBytes = size_t{4} << 30;

// G, the alpha x 3 filter transform, with the interpolation points of the B^T and A^T
// in WinogradKernels.h: 0, +-1 (F2); 0, +-1, +-2 (F4); plus infinity.
constexpr double kG2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
constexpr double kG4[6][3] = {{1.0 / 4, 0, 0},
                              {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                              {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                              {1.0 / 24, 1.0 / 12, 1.0 / 6},
                              {1.0 / 24, -1.0 / 12, 1.0 / 6},
                              {0, 0, 1}};

// G as float, for the separable filter transforms below.
template <int M>
struct FilterTransform {
  static constexpr int alpha = M + 2;
  float g[alpha][3] = {};
  constexpr FilterTransform() {
    for (int a = 0; a < alpha; ++a)
      for (int r = 0; r < 3; ++r) g[a][r] = static_cast<float>(M == 2 ? kG2[a][r] : kG4[a][r]);
  }
};
template <int M>
constexpr FilterTransform<M> kFilterTransform{};

// Filter pairs the filter transforms handle per block of their stack buffers: a whole
// number of vectors, every loop over a block full length (a short block's tail computes
// on zeros or the previous block's values and is not stored) so that the compiler
// vectorises it without a remainder loop.
constexpr int64_t kFilterBlock = 64;

struct PassNames {
  const char* filter;  // filter transform (backward filter: the inverse one, at the end)
  const char* input;   // B^T d B of x (forward, backward filter) or dy (backward data)
  const char* gemm;
  const char* output;  // A^T m A (forward, backward data) or A dy A^T (backward filter)
};
constexpr PassNames kForwardNames{"winograd.fwd.filter_transform", "winograd.fwd.input_transform",
                                  "winograd.fwd.gemm", "winograd.fwd.output_transform"};
constexpr PassNames kBackwardDataNames{
    "winograd.bwd_data.filter_transform", "winograd.bwd_data.input_transform",
    "winograd.bwd_data.gemm", "winograd.bwd_data.output_transform"};
constexpr PassNames kBackwardFilterNames{
    "winograd.bwd_filter.filter_transform", "winograd.bwd_filter.input_transform",
    "winograd.bwd_filter.gemm", "winograd.bwd_filter.dy_transform"};

// Tiles x alpha^2: the transformed-domain products per channel pair of F(m x m).
int64_t transformed_products(const ConvProblem& p, int m) {
  const Shape4 y = p.output();
  return ceil_div(y.h, m) * ceil_div(y.w, m) * (m + 2) * (m + 2);
}

WinogradGeometry geometry(const ConvProblem& p, ConvPass pass, int m) {
  WinogradGeometry g;
  const Shape4 x = p.input, y = p.output();
  g.n = x.n;
  g.nhwc = p.layout == Layout::NHWC;
  if (pass == ConvPass::backward_data) {
    g.in_c = y.c, g.in_h = y.h, g.in_w = y.w;
    g.out_c = x.c, g.out_h = x.h, g.out_w = x.w;
    g.pad_h = p.kernel_h - 1 - p.pad_h;
    g.pad_w = p.kernel_w - 1 - p.pad_w;
  } else {
    g.in_c = x.c, g.in_h = x.h, g.in_w = x.w;
    g.out_c = y.c, g.out_h = y.h, g.out_w = y.w;
    g.pad_h = p.pad_h;
    g.pad_w = p.pad_w;
  }
  g.tiles_h = ceil_div(g.out_h, m);
  g.tiles_w = ceil_div(g.out_w, m);
  return g;
}

struct WinogradPlan {
  int m = 2, alpha2 = 16;
  WinogradGeometry g;
  int64_t tiles = 0, wave = 0;
  size_t u_offset = 0, v_offset = 0, m_offset = 0, bytes = 0;
};

WinogradPlan make_plan(const ConvProblem& p, ConvPass pass, int m) {
  WinogradPlan plan;
  plan.m = m;
  plan.alpha2 = (m + 2) * (m + 2);
  plan.g = geometry(p, pass, m);
  plan.tiles = plan.g.n * plan.g.tiles_h * plan.g.tiles_w;
  const int64_t tile_bytes =
      plan.alpha2 * (plan.g.in_c + plan.g.out_c) * static_cast<int64_t>(sizeof(float));
  const int64_t fit = std::clamp<int64_t>(kWaveBudgetBytes / tile_bytes,
                                          std::min(kMinWaveTiles, plan.tiles), plan.tiles);
  plan.wave =
      ceil_div(plan.tiles, ceil_div(plan.tiles, fit));  // equal waves rather than a short last one
  WorkspaceLayout layout;
  plan.u_offset = layout.add_floats(plan.alpha2 * plan.g.in_c * plan.g.out_c);
  plan.v_offset = layout.add_floats(plan.alpha2 * plan.g.in_c * plan.wave);
  plan.m_offset = layout.add_floats(plan.alpha2 * plan.g.out_c * plan.wave);
  plan.bytes = layout.total_bytes();
  return plan;
}

const WinogradKernelTable& kernels_for(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::avx512: return kWinogradAvx512Kernels;
    case CpuIsa::avx2: return kWinogradAvx2Kernels;
    default: return kWinogradScalarKernels;
  }
}

// Filter tap (k, c, r, s) of a 3x3 filter in the problem's layout (KCRS or KRSC).
struct FilterView {
  const float* data;
  int64_t K, C;
  bool nhwc;
  int64_t offset(int64_t k, int64_t c, int r, int s) const {
    return nhwc ? ((k * 3 + r) * 3 + s) * C + c : ((k * C + c) * 3 + r) * 3 + s;
  }
};

// u[a][o][i] = (G g G^T)[a] with g the 3x3 filter (k, c) = (o, i) (forward) or, for
// backward data, rot180 of (k, c) = (i, o): the transposed, flipped filter. in_major
// stores u[a][i][o] instead (the fused schedule's B operand, outputs contiguous). Each
// task takes rows of u (o, or i when in_major) and writes a block of a row's columns
// per point, computed as (G g) G^T: 3 alpha (3 + alpha) products per pair, not 9 alpha^2.
template <int M>
void transform_filters_m(const ExecContext& ex, const WinogradGeometry& geo, const FilterView& w,
                         bool flip_transpose, bool in_major, float* u) {
  constexpr int A = M + 2;
  constexpr const FilterTransform<M>& G = kFilterTransform<M>;
  const int64_t rows = in_major ? geo.in_c : geo.out_c, cols = in_major ? geo.out_c : geo.in_c;
  ex.pool.parallel_for(rows, [&](int64_t begin, int64_t end) {
    alignas(64) float g[9][kFilterBlock] = {};
    alignas(64) float h[A][3][kFilterBlock];  // G g
    alignas(64) float v[kFilterBlock];
    for (int64_t row = begin; row < end; ++row)
      for (int64_t c0 = 0; c0 < cols; c0 += kFilterBlock) {
        const int64_t n = std::min(kFilterBlock, cols - c0);
        for (int64_t j = 0; j < n; ++j) {
          const int64_t o = in_major ? c0 + j : row, i = in_major ? row : c0 + j;
          for (int rs = 0; rs < 9; ++rs)
            g[rs][j] = flip_transpose ? w.data[w.offset(i, o, 2 - rs / 3, 2 - rs % 3)]
                                      : w.data[w.offset(o, i, rs / 3, rs % 3)];
        }
        for (int64_t j = n; j < kFilterBlock; ++j)
          for (int rs = 0; rs < 9; ++rs) g[rs][j] = 0.0f;
        for (int a = 0; a < A; ++a)
          for (int s = 0; s < 3; ++s)
            for (int64_t j = 0; j < kFilterBlock; ++j)
              h[a][s][j] = G.g[a][0] * g[s][j] + G.g[a][1] * g[3 + s][j] + G.g[a][2] * g[6 + s][j];
        for (int a = 0; a < A; ++a)
          for (int b = 0; b < A; ++b) {
            for (int64_t j = 0; j < kFilterBlock; ++j)
              v[j] = h[a][0][j] * G.g[b][0] + h[a][1][j] * G.g[b][1] + h[a][2][j] * G.g[b][2];
            std::copy_n(v, n, u + ((a * A + b) * rows + row) * cols + c0);
          }
      }
  });
}

void transform_filters(const ExecContext& ex, const char* kernel, const WinogradGeometry& geo,
                       int m, const FilterView& w, bool flip_transpose, bool in_major, float* u) {
  const int64_t outs = geo.out_c, ins = geo.in_c, alpha = m + 2;
  profiler::KernelScope k(ex.tracer, kernel, ex.device, ex.lane,
                          2.0 * outs * ins * 3 * alpha * (3 + alpha),
                          (outs * ins * (9 + alpha * alpha)) * 4.0);
  if (m == 2)
    transform_filters_m<2>(ex, geo, w, flip_transpose, in_major, u);
  else
    transform_filters_m<4>(ex, geo, w, flip_transpose, in_major, u);
}

// dw(k, c) = G^T du[.][k][c] G, the adjoint of transform_filters, of du = the sum of
// `parts` dU's (the fused backward filter's tasks' sums, added here as they are read):
// (G^T du) G per pair, 3 alpha (3 + alpha) products.
template <int M>
void inverse_transform_filters_m(const ExecContext& ex, const WinogradGeometry& geo,
                                 const float* const* parts, int64_t part_count,
                                 const FilterView& dw, float* out) {
  constexpr int A = M + 2;
  constexpr const FilterTransform<M>& G = kFilterTransform<M>;
  const int64_t K = geo.out_c, C = geo.in_c;
  ex.pool.parallel_for(K, [&](int64_t begin, int64_t end) {
    alignas(64) float d[A * A][kFilterBlock] = {};
    alignas(64) float h[3][A][kFilterBlock];  // G^T du
    alignas(64) float v[kFilterBlock];
    for (int64_t kk = begin; kk < end; ++kk)
      for (int64_t c0 = 0; c0 < C; c0 += kFilterBlock) {
        const int64_t n = std::min(kFilterBlock, C - c0);
        for (int ab = 0; ab < A * A; ++ab) {
          std::copy_n(parts[0] + (ab * K + kk) * C + c0, n, d[ab]);
          for (int64_t t = 1; t < part_count; ++t) {
            const float* part = parts[t] + (ab * K + kk) * C + c0;
            for (int64_t j = 0; j < n; ++j) d[ab][j] += part[j];
          }
        }
        for (int r = 0; r < 3; ++r)
          for (int b = 0; b < A; ++b)
            for (int64_t j = 0; j < kFilterBlock; ++j) {
              float sum = 0.0f;
              for (int a = 0; a < A; ++a) sum += G.g[a][r] * d[a * A + b][j];
              h[r][b][j] = sum;
            }
        for (int r = 0; r < 3; ++r)
          for (int s = 0; s < 3; ++s) {
            for (int64_t j = 0; j < kFilterBlock; ++j) {
              float sum = 0.0f;
              for (int b = 0; b < A; ++b) sum += h[r][b][j] * G.g[b][s];
              v[j] = sum;
            }
            for (int64_t j = 0; j < n; ++j) out[dw.offset(kk, c0 + j, r, s)] = v[j];
          }
      }
  });
}

void inverse_transform_filters(const ExecContext& ex, const char* kernel,
                               const WinogradGeometry& geo, int m, const float* const* parts,
                               int64_t part_count, float* dw) {
  const int64_t K = geo.out_c, C = geo.in_c, alpha = m + 2;
  const FilterView view{dw, K, C, geo.nhwc};
  profiler::KernelScope k(ex.tracer, kernel, ex.device, ex.lane,
                          static_cast<double>(K) * C *
                              (2.0 * 3 * alpha * (3 + alpha) + alpha * alpha * (part_count - 1)),
                          (K * C * (9 + alpha * alpha * part_count)) * 4.0);
  if (m == 2)
    inverse_transform_filters_m<2>(ex, geo, parts, part_count, view, dw);
  else
    inverse_transform_filters_m<4>(ex, geo, parts, part_count, view, dw);
}

// Runs body(begin, end) over the wave's tiles in groups of `lanes` (one vector of tiles
// on the NCHW path), in parallel.
template <typename Body>
void for_each_tile_group(ThreadPool& pool, int64_t count, int lanes, Body body) {
  pool.parallel_for(ceil_div(count, lanes),
                    [&](int64_t gb, int64_t ge) { body(gb * lanes, std::min(count, ge * lanes)); });
}

// Items of `alpha2` sgemms split `extent` ways so that the pool gets about two each.
int64_t gemm_splits(const ThreadPool& pool, int alpha2, int64_t extent, int64_t min_extent) {
  return std::clamp<int64_t>(ceil_div(2 * pool.size(), alpha2), 1,
                             std::max<int64_t>(1, extent / min_extent));
}

// m[a] = u[a] v[a] for every point a of one wave: (out_c x in_c) (in_c x count) in
// NCHW, (count x in_c) (in_c x out_c) in NHWC (see WinogradKernelTable.h). NHWC runs the
// products on the vector kernels' own GEMM (u inputs major, as the fused schedule's): on
// 128 x 128 x 128 products per point it beat OpenBLAS's sgemm (docs/BENCHMARKS.md).
void multiply_wave(const ExecContext& ex, const char* kernel, const WinogradPlan& plan,
                   const WinogradKernelTable& table, int64_t count, const float* u, const float* v,
                   float* mt) {
  const WinogradGeometry& g = plan.g;
  const int K = static_cast<int>(g.out_c), C = static_cast<int>(g.in_c);
  profiler::KernelScope k(ex.tracer, kernel, ex.device, ex.lane, 2.0 * plan.alpha2 * K * C * count,
                          plan.alpha2 * (static_cast<double>(K) * C + (K + C) * count) * 4.0);
  const int64_t splits = gemm_splits(ex.pool, plan.alpha2, count, kMinGemmColumns);
  const int64_t chunk = ceil_div(count, splits);
  ex.pool.parallel_for(plan.alpha2 * splits, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t a = item / splits, t0 = item % splits * chunk;
      const int n = static_cast<int>(std::min(count, t0 + chunk) - t0),
                ld = static_cast<int>(count);
      if (n <= 0) continue;
      const float* ua = u + a * K * C;
      const float* va = v + a * C * count;
      float* ma = mt + a * K * count;
      if (!g.nhwc) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, K, n, C, 1.0f, ua, C, va + t0, ld,
                    0.0f, ma + t0, ld);
        continue;
      }
      WinogradGemmArgs product;
      product.rows = n, product.cols = K, product.depth = C;
      product.a = va + t0 * C, product.a_row = C, product.a_depth = 1;
      product.b = ua, product.ldb = K;
      product.out = ma + t0 * K, product.ldc = K;
      table.gemm(product);
    }
  });
}

// du[a] = (accumulate ? du[a] : 0) + dm[a] v[a]^T for every point a of one wave; du[a]
// is out_c x in_c. NHWC on the vector kernels' GEMM, as multiply_wave.
void accumulate_filter_wave(const ExecContext& ex, const char* kernel, const WinogradPlan& plan,
                            const WinogradKernelTable& table, int64_t count, const float* dm,
                            const float* v, float* du, bool accumulate) {
  const WinogradGeometry& g = plan.g;
  const int K = static_cast<int>(g.out_c), C = static_cast<int>(g.in_c),
            n = static_cast<int>(count);
  profiler::KernelScope k(ex.tracer, kernel, ex.device, ex.lane, 2.0 * plan.alpha2 * K * C * count,
                          plan.alpha2 * (static_cast<double>(K) * C + (K + C) * count) * 4.0);
  const int64_t splits = gemm_splits(ex.pool, plan.alpha2, K, kMinGemmRows);
  const int64_t chunk = ceil_div(K, splits);
  ex.pool.parallel_for(plan.alpha2 * splits, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t a = item / splits, k0 = item % splits * chunk;
      const int rows = static_cast<int>(std::min<int64_t>(K, k0 + chunk) - k0);
      if (rows <= 0) continue;
      const float* dma = dm + a * K * count;
      const float* va = v + a * C * count;
      float* dua = du + a * K * C + k0 * C;
      if (!g.nhwc) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, C, n, 1.0f, dma + k0 * count, n,
                    va, n, accumulate ? 1.0f : 0.0f, dua, C);
        continue;
      }
      WinogradGemmArgs product;
      product.rows = rows, product.cols = C, product.depth = count;
      product.a = dma + k0, product.a_row = 1, product.a_depth = K;
      product.b = va, product.ldb = C;
      product.out = dua, product.ldc = C;
      product.accumulate = accumulate;
      table.gemm(product);
    }
  });
}

// Floats the transform of one wave reads and writes, for the traced byte counts.
double transform_bytes(const WinogradPlan& plan, int64_t count, int64_t channels, int64_t patch) {
  return static_cast<double>(count) * channels * (patch * patch + plan.alpha2) * 4.0;
}

const WinogradTileKernels& tile_kernels(const WinogradKernelTable& table, int m) {
  return m == 2 ? table.f2 : table.f4;
}

// The fused schedule's transformed tiles of one block (V and M, or V and dM) stay below
// this, so they stay in L2 beside the transformed filters and the input rows being read.
// Backward filter loads and stores a task's whole dU (alpha^2 x in_c x out_c) per block,
// so its blocks hold at least as many bytes of transformed tiles as dU has: 64 -> 64
// channels get 24 tiles rather than 12.
constexpr int64_t kFusedBlockBytes = 256 << 10;
// Blocks of this many tiles and more are rounded down to a multiple of it: every register
// block height of WinogradKernels.h's small GEMM divides it.
constexpr int64_t kFusedRowMultiple = 24;
// Tasks of a fused pass, each with its own block buffers (and dU) in the workspace: up to
// two per thread, so a thread that is preempted leaves work the others take over.
constexpr int kFusedMaxTasks = 8;
// The automatic schedule fuses up to 64 -> 64 channels. Beyond, a block's tiles are few
// (its transforms of many channels fill the budget), so backward filter reads and writes
// the whole dU per handful of tiles, and the waves' products per point are no longer
// thin: waves win.
constexpr int64_t kFusedMaxChannelProduct = 64 * 64;

struct FusedPlan {
  int m = 2, alpha2 = 16;
  WinogradGeometry g;
  int64_t tiles = 0, block = 0, blocks = 0;
  int64_t stride = 0;  // tiles per point in the block buffers: block, made odd (WinogradWave)
  size_t u_offset = 0, bytes = 0;
  size_t v_offset[kFusedMaxTasks] = {}, m_offset[kFusedMaxTasks] = {},
         du_offset[kFusedMaxTasks] = {};
};

FusedPlan make_fused_plan(const ConvProblem& p, ConvPass pass, int m) {
  FusedPlan plan;
  plan.m = m;
  plan.alpha2 = (m + 2) * (m + 2);
  plan.g = geometry(p, pass, m);
  const WinogradGeometry& g = plan.g;
  plan.tiles = g.n * g.tiles_h * g.tiles_w;
  const int64_t tile_bytes = plan.alpha2 * (g.in_c + g.out_c) * static_cast<int64_t>(sizeof(float));
  const int64_t filter_sum_bytes =
      plan.alpha2 * g.in_c * g.out_c * static_cast<int64_t>(sizeof(float));
  const int64_t budget = pass == ConvPass::backward_filter
                             ? std::max(kFusedBlockBytes, filter_sum_bytes)
                             : kFusedBlockBytes;
  int64_t block = std::max<int64_t>(1, budget / tile_bytes);
  if (block >= kFusedRowMultiple) block -= block % kFusedRowMultiple;
  plan.block = std::min(block, plan.tiles);
  plan.blocks = ceil_div(plan.tiles, plan.block);
  plan.stride = plan.block | 1;
  WorkspaceLayout layout;
  plan.u_offset = layout.add_floats(plan.alpha2 * g.in_c * g.out_c);
  const bool filter_sums = pass == ConvPass::backward_filter;
  for (int t = 0; t < kFusedMaxTasks; ++t) {
    plan.v_offset[t] = layout.add_floats(plan.alpha2 * plan.stride * g.in_c);
    plan.m_offset[t] = layout.add_floats(plan.alpha2 * plan.stride * g.out_c);
    plan.du_offset[t] = layout.add_floats(filter_sums ? plan.alpha2 * g.in_c * g.out_c : 0);
  }
  plan.bytes = layout.total_bytes();
  return plan;
}

int64_t fused_tasks(const ThreadPool& pool, const FusedPlan& plan) {
  return std::clamp<int64_t>(2 * pool.size(), 1, std::min<int64_t>(kFusedMaxTasks, plan.blocks));
}

WinogradWave fused_block(const FusedPlan& plan, int64_t b) {
  return {b * plan.block, std::min(plan.block, plan.tiles - b * plan.block), plan.stride};
}

// Backward filter: runs body(task, block, first of the task) for every block, each task's
// share of the blocks in order on one thread (a task never has none: tasks <= blocks), so
// each dU sums the same tiles in the same order on every run.
template <typename Body>
void for_each_fused_block(ThreadPool& pool, const FusedPlan& plan, int64_t tasks, Body body) {
  pool.parallel_for(tasks, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task)
      for (int64_t b = plan.blocks * task / tasks; b < plan.blocks * (task + 1) / tasks; ++b)
        body(task, fused_block(plan, b), b == plan.blocks * task / tasks);
  });
}

// Forward and backward data: blocks are independent, so each task (one per thread, each
// with its own buffers) takes the next block no task has taken. A thread the OS
// deschedules on a shared machine then holds up one block, not a fixed share.
template <typename Body>
void for_each_fused_block_dynamic(ThreadPool& pool, const FusedPlan& plan, Body body) {
  const int64_t tasks =
      std::clamp<int64_t>(pool.size(), 1, std::min<int64_t>(kFusedMaxTasks, plan.blocks));
  std::atomic<int64_t> next{0};
  pool.parallel_for(tasks, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task)
      for (int64_t b = next.fetch_add(1); b < plan.blocks; b = next.fetch_add(1))
        body(task, fused_block(plan, b));
  });
}

}  // namespace

const char* to_string(WinogradTile tile) {
  switch (tile) {
    case WinogradTile::f2: return "f2";
    case WinogradTile::f4: return "f4";
    default: return "auto";
  }
}

std::optional<WinogradTile> parse_winograd_tile(std::string_view text) {
  for (WinogradTile tile : {WinogradTile::automatic, WinogradTile::f2, WinogradTile::f4})
    if (text == to_string(tile)) return tile;
  return std::nullopt;
}

int winograd_tile_size(WinogradTile tile, const ConvProblem& problem) {
  switch (tile) {
    case WinogradTile::f2: return 2;
    case WinogradTile::f4: return 4;
    default:
      return 4 * transformed_products(problem, 4) <= 3 * transformed_products(problem, 2) ? 4 : 2;
  }
}

const char* to_string(WinogradSchedule schedule) {
  switch (schedule) {
    case WinogradSchedule::waves: return "waves";
    case WinogradSchedule::fused: return "fused";
    default: return "auto";
  }
}

ConvWinograd::ConvWinograd(WinogradTile tile, std::optional<CpuIsa> isa, WinogradSchedule schedule)
    : tile_(tile),
      isa_(isa ? *isa : cpu_isa_from_environment("TUNESCOPE_WINOGRAD_ISA")),
      schedule_(schedule) {
  if (!cpu_supports(isa_))
    fail(ErrorKind::usage, "winograd: this CPU cannot run the ", to_string(isa_), " path");
}

std::string ConvWinograd::unsupported_reason(const ConvProblem& p) const {
  std::string invalid = invalid_problem_reason(p);
  if (!invalid.empty()) return invalid;
  if (p.kernel_h != 3 || p.kernel_w != 3)
    return cat("winograd runs 3x3 filters only, not ", p.kernel_h, "x", p.kernel_w);
  if (p.stride_h != 1 || p.stride_w != 1)
    return cat("winograd runs stride 1 only, not ", p.stride_h, "x", p.stride_w);
  if (schedule_ == WinogradSchedule::fused && p.layout != Layout::NHWC)
    return "winograd's fused schedule runs NHWC only (channels contiguous)";
  if (const size_t bytes = plan_bytes(p); bytes > kMaxWorkspaceBytes)
    return cat("winograd: ", p.key(), " needs ", bytes >> 20, " MiB of workspace (limit ",
               kMaxWorkspaceBytes >> 20, " MiB)");
  return {};
}

WinogradSchedule ConvWinograd::schedule_for(const ConvProblem& p) const {
  if (schedule_ != WinogradSchedule::automatic) return schedule_;
  return p.layout == Layout::NHWC && p.input.c * p.out_channels <= kFusedMaxChannelProduct
             ? WinogradSchedule::fused
             : WinogradSchedule::waves;
}

size_t ConvWinograd::plan_bytes(const ConvProblem& p) const {
  const int m = winograd_tile_size(tile_, p);
  if (schedule_for(p) == WinogradSchedule::fused)
    return std::max({make_fused_plan(p, ConvPass::forward, m).bytes,
                     make_fused_plan(p, ConvPass::backward_data, m).bytes,
                     make_fused_plan(p, ConvPass::backward_filter, m).bytes});
  // Backward filter plans as forward does; backward data tiles dx instead of y.
  return std::max(make_plan(p, ConvPass::forward, m).bytes,
                  make_plan(p, ConvPass::backward_data, m).bytes);
}

size_t ConvWinograd::workspace_bytes(const ConvProblem& p) const {
  return supports(p) ? plan_bytes(p) : 0;
}

namespace {

// What every pass does first: checks the tensors, support and the workspace.
WinogradPlan begin_pass(const ConvWinograd& algo, WinogradTile tile, const ConvCall& call,
                        ConvPass pass, const Tensor& a, const Tensor& b, const Tensor& out) {
  check_conv_args(algo.name(), pass, call.problem, a, b, out);
  const std::string reason = algo.unsupported_reason(call.problem);
  if (!reason.empty())
    fail(ErrorKind::runtime, "conv winograd.", pass_tag(pass), " on ", call.problem.key(), ": ",
         reason);
  check_workspace(algo.name(), call, algo.workspace_bytes(call.problem));
  return make_plan(call.problem, pass, winograd_tile_size(tile, call.problem));
}

// Forward and backward data: U once, then per wave input transform, sgemms and output
// transform of `in` into `out`.
void run_forward_like(const ConvCall& call, const WinogradPlan& plan,
                      const WinogradKernelTable& table, const PassNames& names, const Tensor& in,
                      const Tensor& w, bool flip_transpose, Tensor& out) {
  const ExecContext& ex = call.exec;
  const WinogradGeometry& g = plan.g;
  const WinogradTileKernels& kernels = tile_kernels(table, plan.m);
  float* u = WorkspaceLayout::at(call.workspace, plan.u_offset);
  float* v = WorkspaceLayout::at(call.workspace, plan.v_offset);
  float* mt = WorkspaceLayout::at(call.workspace, plan.m_offset);
  const FilterView filter{w.data(), call.problem.out_channels, call.problem.input.c, g.nhwc};
  transform_filters(ex, names.filter, g, plan.m, filter, flip_transpose, g.nhwc, u);
  for (int64_t first = 0; first < plan.tiles; first += plan.wave) {
    const WinogradWave wave{first, std::min(plan.wave, plan.tiles - first)};
    {
      profiler::KernelScope k(ex.tracer, names.input, ex.device, ex.lane, 0,
                              transform_bytes(plan, wave.count, g.in_c, plan.m + 2));
      for_each_tile_group(ex.pool, wave.count, table.lanes, [&](int64_t b, int64_t e) {
        kernels.input(g, in.data(), wave, b, e, v);
      });
    }
    multiply_wave(ex, names.gemm, plan, table, wave.count, u, v, mt);
    profiler::KernelScope k(ex.tracer, names.output, ex.device, ex.lane, 0,
                            transform_bytes(plan, wave.count, g.out_c, plan.m));
    for_each_tile_group(ex.pool, wave.count, table.lanes, [&](int64_t b, int64_t e) {
      kernels.output(g, mt, wave, b, e, out.data());
    });
  }
}

// The fused schedule of forward and backward data: U once (inputs major), then per
// block input transform, the alpha^2 products M[a] = V[a] U[a] (block x in_c times
// in_c x out_c) and output transform, all on one task's buffers.
void run_fused_forward_like(const ConvCall& call, const FusedPlan& plan,
                            const WinogradKernelTable& table, const PassNames& names,
                            const char* fused_name, const Tensor& in, const Tensor& w,
                            bool flip_transpose, Tensor& out) {
  const ExecContext& ex = call.exec;
  const WinogradGeometry& g = plan.g;
  const WinogradTileKernels& kernels = tile_kernels(table, plan.m);
  float* u = WorkspaceLayout::at(call.workspace, plan.u_offset);
  const FilterView filter{w.data(), call.problem.out_channels, call.problem.input.c, g.nhwc};
  transform_filters(ex, names.filter, g, plan.m, filter, flip_transpose, true, u);
  const int64_t K = g.out_c, C = g.in_c;
  profiler::KernelScope k(
      ex.tracer, fused_name, ex.device, ex.lane, 2.0 * plan.alpha2 * K * C * plan.tiles,
      (static_cast<double>(g.n) * (C * g.in_h * g.in_w + K * g.out_h * g.out_w) +
       plan.alpha2 * K * C) *
          4.0);
  for_each_fused_block_dynamic(ex.pool, plan, [&](int64_t task, WinogradWave wave) {
    float* v = WorkspaceLayout::at(call.workspace, plan.v_offset[task]);
    float* mt = WorkspaceLayout::at(call.workspace, plan.m_offset[task]);
    kernels.input(g, in.data(), wave, 0, wave.count, v);
    for (int a = 0; a < plan.alpha2; ++a) {
      WinogradGemmArgs product;
      product.rows = wave.count, product.cols = K, product.depth = C;
      product.a = v + a * plan.stride * C, product.a_row = C;
      product.a_depth = 1;
      product.b = u + a * C * K, product.ldb = K;
      product.out = mt + a * plan.stride * K, product.ldc = K;
      table.gemm(product);
    }
    kernels.output(g, mt, wave, 0, wave.count, out.data());
  });
}

// The fused backward filter: per block V of x and dM = A dy A^T, then dU[a] += dM[a]^T
// V[a] (out_c x block times block x in_c) into the task's own dU; then dw = G^T dU G of
// the tasks' sums, added as the inverse transform reads them.
void run_fused_backward_filter(const ConvCall& call, const FusedPlan& plan,
                               const WinogradKernelTable& table, const Tensor& x, const Tensor& dy,
                               Tensor& dw) {
  const ExecContext& ex = call.exec;
  const WinogradGeometry& g = plan.g;
  const WinogradTileKernels& kernels = tile_kernels(table, plan.m);
  const int64_t K = g.out_c, C = g.in_c, tasks = fused_tasks(ex.pool, plan);
  {
    profiler::KernelScope k(
        ex.tracer, "winograd.bwd_filter.fused", ex.device, ex.lane,
        2.0 * plan.alpha2 * K * C * plan.tiles,
        (static_cast<double>(g.n) * (C * g.in_h * g.in_w + K * g.out_h * g.out_w) +
         tasks * plan.alpha2 * K * C) *
            4.0);
    for_each_fused_block(ex.pool, plan, tasks, [&](int64_t task, WinogradWave wave, bool first) {
      float* v = WorkspaceLayout::at(call.workspace, plan.v_offset[task]);
      float* dm = WorkspaceLayout::at(call.workspace, plan.m_offset[task]);
      float* du = WorkspaceLayout::at(call.workspace, plan.du_offset[task]);
      kernels.input(g, x.data(), wave, 0, wave.count, v);
      kernels.output_adjoint(g, dy.data(), wave, 0, wave.count, dm);
      for (int a = 0; a < plan.alpha2; ++a) {
        WinogradGemmArgs product;
        product.rows = K, product.cols = C, product.depth = wave.count;
        product.a = dm + a * plan.stride * K, product.a_row = 1, product.a_depth = K;
        product.b = v + a * plan.stride * C, product.ldb = C;
        product.out = du + a * K * C, product.ldc = C;
        product.accumulate = !first;
        table.gemm(product);
      }
    });
  }
  const float* parts[kFusedMaxTasks];
  for (int64_t t = 0; t < tasks; ++t)
    parts[t] = WorkspaceLayout::at(call.workspace, plan.du_offset[t]);
  inverse_transform_filters(ex, kBackwardFilterNames.filter, g, plan.m, parts, tasks, dw.data());
}

}  // namespace

void ConvWinograd::forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) {
  const WinogradPlan plan = begin_pass(*this, tile_, call, ConvPass::forward, x, w, y);
  if (schedule_for(call.problem) == WinogradSchedule::fused)
    run_fused_forward_like(call, make_fused_plan(call.problem, ConvPass::forward, plan.m),
                           kernels_for(isa_), kForwardNames, "winograd.fwd.fused", x, w, false, y);
  else
    run_forward_like(call, plan, kernels_for(isa_), kForwardNames, x, w, false, y);
}

void ConvWinograd::backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w,
                                 Tensor& dx) {
  const WinogradPlan plan = begin_pass(*this, tile_, call, ConvPass::backward_data, dy, w, dx);
  if (schedule_for(call.problem) == WinogradSchedule::fused)
    run_fused_forward_like(call, make_fused_plan(call.problem, ConvPass::backward_data, plan.m),
                           kernels_for(isa_), kBackwardDataNames, "winograd.bwd_data.fused", dy, w,
                           true, dx);
  else
    run_forward_like(call, plan, kernels_for(isa_), kBackwardDataNames, dy, w, true, dx);
}

void ConvWinograd::backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                                   Tensor& dw) {
  const WinogradPlan plan = begin_pass(*this, tile_, call, ConvPass::backward_filter, x, dy, dw);
  if (schedule_for(call.problem) == WinogradSchedule::fused) {
    run_fused_backward_filter(call,
                              make_fused_plan(call.problem, ConvPass::backward_filter, plan.m),
                              kernels_for(isa_), x, dy, dw);
    return;
  }
  const ExecContext& ex = call.exec;
  const WinogradGeometry& g = plan.g;
  const WinogradKernelTable& table = kernels_for(isa_);
  const WinogradTileKernels& kernels = tile_kernels(table, plan.m);
  float* du = WorkspaceLayout::at(call.workspace, plan.u_offset);
  float* v = WorkspaceLayout::at(call.workspace, plan.v_offset);
  float* dm = WorkspaceLayout::at(call.workspace, plan.m_offset);
  const PassNames& names = kBackwardFilterNames;
  for (int64_t first = 0; first < plan.tiles; first += plan.wave) {
    const WinogradWave wave{first, std::min(plan.wave, plan.tiles - first)};
    {
      profiler::KernelScope k(ex.tracer, names.input, ex.device, ex.lane, 0,
                              transform_bytes(plan, wave.count, g.in_c, plan.m + 2));
      for_each_tile_group(ex.pool, wave.count, table.lanes,
                          [&](int64_t b, int64_t e) { kernels.input(g, x.data(), wave, b, e, v); });
    }
    {
      profiler::KernelScope k(ex.tracer, names.output, ex.device, ex.lane, 0,
                              transform_bytes(plan, wave.count, g.out_c, plan.m));
      for_each_tile_group(ex.pool, wave.count, table.lanes, [&](int64_t b, int64_t e) {
        kernels.output_adjoint(g, dy.data(), wave, b, e, dm);
      });
    }
    accumulate_filter_wave(ex, names.gemm, plan, table, wave.count, dm, v, du, first != 0);
  }
  const float* parts[] = {du};
  inverse_transform_filters(ex, names.filter, g, plan.m, parts, 1, dw.data());
}

bool ConvWinograd::knob_applies(std::string_view key, const ConvProblem& problem) const {
  return key == winograd_tile_knob.key() && supports(problem);
}

const Knob<WinogradTile> winograd_tile_knob{
    [] {
      KnobSpec spec;
      spec.key = "winograd_tile";
      spec.type = KnobType::choice;
      spec.choices = {"auto", "f2", "f4"};
      spec.default_value = "auto";
      spec.scope = KnobScope::conv_algorithm;
      spec.help =
          "Winograd output tile of 3x3 stride-1 layers: auto (F(4x4) unless it saves under 25% of "
          "the products of "
          "F(2x2)) | f2 (F(2x2,3x3)) | f4 (F(4x4,3x3): fewer products, larger rounding error)";
      return spec;
    }(),
    {[](std::string_view text) {
       return parse_winograd_tile(text).value_or(WinogradTile::automatic);
     },
     [](const WinogradTile& tile) { return std::string(to_string(tile)); }}};

namespace {
const ConvAlgorithmRegistration registration("cpu", "winograd", [](const KnobValues& knobs) {
  return std::make_unique<ConvWinograd>(winograd_tile_knob.get(knobs));
});
}  // namespace

}  // namespace tunescope::cpu
