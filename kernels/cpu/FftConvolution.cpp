// FFT convolution on any FftTransform (see FftConvolution.h).
#include "kernels/cpu/FftConvolution.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>

#include "core/base/Error.h"
#include "core/base/ThreadPool.h"
#include "kernels/shared/ConvArgs.h"
#include "kernels/shared/FftWorkspace.h"
#include "kernels/shared/WorkspaceLayout.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {

namespace {

using cfloat = std::complex<float>;

// A problem whose single-image chunk needs more than this is refused, not attempted.
constexpr int64_t kMaxWorkspaceBytes = int64_t{4} << 30;
// Planes per transform call: enough to amortise the call, few enough to balance threads.
constexpr int64_t kPlanesPerCall = 8;
// Frequency bins per product tile: the accumulators of a tile stay in L1.
constexpr int64_t kBinTile = 64;

// One operand plane set of the per-bin product: plane (i, l) of A is at
// a + (i * stride_i + l * stride_l) * complex_stride.
struct SpectralOperand {
  const cfloat* data;
  int64_t stride_outer, stride_inner;
};

// out[i][j] (+)= sum over l of opA(a[i][l]) * opB(b[l][j]) on bins [f0, f0 + nf), JB
// output planes j at once so each A bin is loaded once per JB products. op = conj when
// the flag is set.
template <int JB, bool ConjA, bool ConjB>
void spectral_block(const SpectralOperand& a, const SpectralOperand& b, cfloat* out, int64_t o_si,
                    int64_t o_sj, int64_t L, int64_t cs, int64_t i, int64_t j0, int64_t f0,
                    int64_t nf, bool accumulate) {
  float acc[JB][2 * kBinTile];
  for (int jb = 0; jb < JB; ++jb) {
    const float* o = reinterpret_cast<const float*>(out + (i * o_si + (j0 + jb) * o_sj) * cs + f0);
    for (int64_t f = 0; f < 2 * nf; ++f) acc[jb][f] = accumulate ? o[f] : 0.0f;
  }
  const float sa = ConjA ? -1.0f : 1.0f, sb = ConjB ? -1.0f : 1.0f;
  for (int64_t l = 0; l < L; ++l) {
    const float* ap = reinterpret_cast<const float*>(
        a.data + (i * a.stride_outer + l * a.stride_inner) * cs + f0);
    for (int jb = 0; jb < JB; ++jb) {
      const float* bp = reinterpret_cast<const float*>(
          b.data + (l * b.stride_outer + (j0 + jb) * b.stride_inner) * cs + f0);
      float* accj = acc[jb];
      for (int64_t f = 0; f < nf; ++f) {
        const float ar = ap[2 * f], ai = sa * ap[2 * f + 1];
        const float br = bp[2 * f], bi = sb * bp[2 * f + 1];
        accj[2 * f] += ar * br - ai * bi;
        accj[2 * f + 1] += ar * bi + ai * br;
      }
    }
  }
  for (int jb = 0; jb < JB; ++jb) {
    float* o = reinterpret_cast<float*>(out + (i * o_si + (j0 + jb) * o_sj) * cs + f0);
    std::copy_n(acc[jb], 2 * nf, o);
  }
}

// The complex matrix product per frequency bin: out[i][j] (+)= sum_l opA(a[i][l]) opB(b[l][j])
// for every bin, with bins innermost so the loops vectorise; parallel over (i, bin tile).
template <bool ConjA, bool ConjB>
void spectral_gemm(ThreadPool& pool, int64_t I, int64_t J, int64_t L, int64_t bins, int64_t cs,
                   const SpectralOperand& a, const SpectralOperand& b, cfloat* out, int64_t o_si,
                   int64_t o_sj, bool accumulate) {
  const int64_t tiles = ceil_div(bins, kBinTile);
  pool.parallel_for(I * tiles, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t i = item / tiles, f0 = item % tiles * kBinTile;
      const int64_t nf = std::min(kBinTile, bins - f0);
      int64_t j = 0;
      for (; j + 4 <= J; j += 4)
        spectral_block<4, ConjA, ConjB>(a, b, out, o_si, o_sj, L, cs, i, j, f0, nf, accumulate);
      for (; j + 2 <= J; j += 2)
        spectral_block<2, ConjA, ConjB>(a, b, out, o_si, o_sj, L, cs, i, j, f0, nf, accumulate);
      for (; j < J; ++j)
        spectral_block<1, ConjA, ConjB>(a, b, out, o_si, o_sj, L, cs, i, j, f0, nf, accumulate);
    }
  });
}

// Where the planes of a tensor lie in the transform planes. Plane i of a call counts
// (image, tile, channel) with the channel fastest. In the plane of tile (ty, tx), whose
// origin is (ty * tile_h, tx * tile_w) in the tensor, t(n, c, h, w) sits at row
// h * step_h + top - ty * tile_h and column w * step_w + left - tx * tile_w. Untiled
// maps have one tile; a step is a dilation when packing (dy spread onto the stride-1
// grid) and a stride when unpacking (every u-th output kept).
struct PlaneMap {
  int64_t tiles_h = 1, tiles_w = 1;
  int64_t tile_h = 0, tile_w = 0;
  int64_t top = 0, left = 0;
  int64_t step_h = 1, step_w = 1;
  // Pack only the tile's own rows and columns instead of every one that falls inside the
  // plane (backward filter's dy: each output position belongs to one tile).
  bool own_only = false;
};

PlaneMap whole_planes(int64_t top, int64_t left, int64_t step_h, int64_t step_w) {
  constexpr int64_t kWhole = int64_t{1} << 40;  // one tile larger than any tensor
  return {1, 1, kWhole, kWhole, top, left, step_h, step_w, false};
}

PlaneMap tiled_planes(const FftTileGeometry& g, bool over_input, int64_t top, int64_t left,
                      bool own_only = false) {
  return {over_input ? g.in_tiles_h : g.out_tiles_h,
          over_input ? g.in_tiles_w : g.out_tiles_w,
          g.tile_h,
          g.tile_w,
          top,
          left,
          1,
          1,
          own_only};
}

// The indices i in [lo, hi) whose position i * step + offset lies in [0, size).
std::pair<int64_t, int64_t> visible(int64_t lo, int64_t hi, int64_t step, int64_t offset,
                                    int64_t size) {
  const int64_t first = offset >= 0 ? 0 : ceil_div(-offset, step);
  const int64_t last = size - 1 - offset < 0 ? 0 : (size - 1 - offset) / step + 1;
  return {std::max(lo, first), std::min(hi, last)};
}

// One plane of a call: where its data is in t and how it maps onto the transform plane.
struct PlaneSlot {
  int64_t offset;              // t.offset(n, c, 0, 0)
  int64_t origin_h, origin_w;  // the tile's origin in t
};

PlaneSlot plane_slot(const Tensor& t, const PlaneMap& m, int64_t n0, int64_t plane) {
  const int64_t C = t.shape().c, tiles = m.tiles_h * m.tiles_w;
  const int64_t tile = plane / C % tiles;
  return {t.offset(n0 + plane / (C * tiles), plane % C, 0, 0), tile / m.tiles_w * m.tile_h,
          tile % m.tiles_w * m.tile_w};
}

// Copies planes [first, first + count) of t (from image n0) into zeroed real planes.
void pack_planes(const Tensor& t, const PlaneMap& m, int64_t n0, int64_t first, int64_t count,
                 const FftShape& s, float* real) {
  const Shape4 shape = t.shape();
  const Strides4 st = t.strides();
  for (int64_t i = 0; i < count; ++i) {
    const PlaneSlot slot = plane_slot(t, m, n0, first + i);
    const float* src = t.data() + slot.offset;
    float* dst = real + i * s.real_stride;
    std::fill_n(dst, s.rows * s.cols, 0.0f);
    const int64_t top = m.top - slot.origin_h, left = m.left - slot.origin_w;
    const auto [h0, h1] = visible(
        m.own_only ? slot.origin_h : 0,
        m.own_only ? std::min(shape.h, slot.origin_h + m.tile_h) : shape.h, m.step_h, top, s.rows);
    const auto [w0, w1] = visible(
        m.own_only ? slot.origin_w : 0,
        m.own_only ? std::min(shape.w, slot.origin_w + m.tile_w) : shape.w, m.step_w, left, s.cols);
    for (int64_t h = h0; h < h1; ++h) {
      float* row = dst + (h * m.step_h + top) * s.cols + left;
      const float* in = src + h * st.h;
      for (int64_t w = w0; w < w1; ++w) row[w * m.step_w] = in[w * st.w];
    }
  }
}

// The inverse of pack_planes, scaled: each tile writes its own rows and columns of t,
// t(n, c, h, w) = scale * plane[h * step_h + top - origin_h][w * step_w + left - origin_w].
void unpack_planes(const float* real, const PlaneMap& m, int64_t first, int64_t count,
                   const FftShape& s, Tensor& t, int64_t n0, float scale) {
  const Shape4 shape = t.shape();
  const Strides4 st = t.strides();
  for (int64_t i = 0; i < count; ++i) {
    const PlaneSlot slot = plane_slot(t, m, n0, first + i);
    float* dst = t.data() + slot.offset;
    const float* src = real + i * s.real_stride;
    const int64_t h1 = std::min(shape.h, slot.origin_h + m.tile_h);
    const int64_t w1 = std::min(shape.w, slot.origin_w + m.tile_w);
    const int64_t top = m.top - slot.origin_h, left = m.left - slot.origin_w;
    for (int64_t h = slot.origin_h; h < h1; ++h) {
      const float* row = src + (h * m.step_h + top) * s.cols + left;
      float* out = dst + h * st.h;
      for (int64_t w = slot.origin_w; w < w1; ++w) out[w * st.w] = scale * row[w * m.step_w];
    }
  }
}

// The maps of each operand. Tiled (stride 1): x and y tiles start at the same output
// position, the patch of x pad rows above it; backward data tiles dx, and the full
// convolution of a dy patch starting R - 1 - pad rows above a dx tile is valid from row
// R - 1 on; backward filter's dy tile holds only its own rows, so the per-tile
// correlations with the x patches add up to the whole one. Untiled: as documented in
// FftConvolution.h.
PlaneMap x_map(const ConvProblem& p, const FftTileGeometry& g) {
  return g.tiled ? tiled_planes(g, false, p.pad_h, p.pad_w) : whole_planes(p.pad_h, p.pad_w, 1, 1);
}
PlaneMap y_map(const ConvProblem& p, const FftTileGeometry& g) {
  return g.tiled ? tiled_planes(g, false, 0, 0) : whole_planes(0, 0, p.stride_h, p.stride_w);
}
PlaneMap dy_data_map(const ConvProblem& p, const FftTileGeometry& g) {
  return g.tiled ? tiled_planes(g, true, p.kernel_h - 1 - p.pad_h, p.kernel_w - 1 - p.pad_w)
                 : whole_planes(0, 0, p.stride_h, p.stride_w);
}
PlaneMap dx_map(const ConvProblem& p, const FftTileGeometry& g) {
  return g.tiled ? tiled_planes(g, true, p.kernel_h - 1, p.kernel_w - 1)
                 : whole_planes(p.pad_h, p.pad_w, 1, 1);
}
PlaneMap dy_filter_map(const ConvProblem& p, const FftTileGeometry& g) {
  return g.tiled ? tiled_planes(g, false, 0, 0, true) : whole_planes(0, 0, p.stride_h, p.stride_w);
}
PlaneMap filter_map() { return whole_planes(0, 0, 1, 1); }

// Runs body(first, count) over blocks of kPlanesPerCall planes in parallel.
template <typename Body>
void for_each_plane_block(ThreadPool& pool, int64_t planes, Body body) {
  pool.parallel_for(ceil_div(planes, kPlanesPerCall), [&](int64_t b, int64_t e) {
    for (int64_t block = b; block < e; ++block) {
      const int64_t first = block * kPlanesPerCall;
      body(first, std::min(kPlanesPerCall, planes - first));
    }
  });
}

// The usual 2.5 N log2 N flop estimate of one real transform of N points.
double transform_flops(const FftShape& s, int64_t planes) {
  const double points = static_cast<double>(s.rows * s.cols);
  return 2.5 * points * std::log2(points) * static_cast<double>(planes);
}

}  // namespace

struct FftConvolution::Plan {
  FftTileGeometry geometry;
  FftShape shape;
  int64_t chunk = 1;   // images per chunk
  int64_t planes = 1;  // max(C, K) x tiles: planes per image of either side
  size_t spec_a = 0, spec_b = 0, spec_filter = 0, real = 0;
  size_t bytes = 0;
  int64_t single_image_bytes = 0;
};

struct FftConvolution::PassSetup {
  Plan plan;
  FftTransform& transform;
  cfloat* spec_a;
  cfloat* spec_b;
  cfloat* spec_filter;
  float* real;
};

FftConvolution::FftConvolution(std::string name, FftKernelNames kernel_names,
                               std::unique_ptr<FftTransformFactory> transforms,
                               int64_t chunk_budget_bytes, FftTileChoice tiling,
                               double tiled_flop_weight, bool keep_spectra)
    : name_(std::move(name)),
      kernel_names_(kernel_names),
      transforms_(std::move(transforms)),
      chunk_budget_bytes_(chunk_budget_bytes),
      tiling_(tiling),
      tiled_flop_weight_(tiled_flop_weight),
      keep_spectra_(keep_spectra) {}

FftConvolution::~FftConvolution() = default;

FftConvolution::Plan FftConvolution::make_plan(const ConvProblem& p) const {
  Plan plan;
  plan.geometry = choose_fft_tiles(p, tiling_, *transforms_, tiled_flop_weight_);
  FftShape& s = plan.shape;
  s.rows = plan.geometry.fft_h;
  s.cols = plan.geometry.fft_w;
  s.real_stride = round_up(s.rows * s.cols, 16);  // 64 bytes of floats
  s.complex_stride = round_up(s.bins(), 8);       // 64 bytes of complex floats
  const int64_t C = p.input.c, K = p.out_channels, N = p.input.n;
  plan.planes = std::max(C, K) * std::max(plan.geometry.out_tiles(), plan.geometry.in_tiles());
  const int64_t spectrum_bytes = s.complex_stride * static_cast<int64_t>(sizeof(cfloat));
  const int64_t real_bytes = s.real_stride * static_cast<int64_t>(sizeof(float));
  const int64_t per_image = plan.planes * (2 * spectrum_bytes + real_bytes);
  const int64_t fixed = K * C * (spectrum_bytes + real_bytes);
  const int64_t fit = std::clamp<int64_t>(chunk_budget_bytes_ / per_image, 1, N);
  plan.chunk = ceil_div(N, ceil_div(N, fit));
  plan.single_image_bytes = per_image + fixed;
  WorkspaceLayout ws;
  plan.spec_a = ws.add_floats(2 * plan.chunk * plan.planes * s.complex_stride);
  plan.spec_b = ws.add_floats(2 * plan.chunk * plan.planes * s.complex_stride);
  plan.spec_filter = ws.add_floats(2 * K * C * s.complex_stride);
  plan.real = ws.add_floats(std::max(plan.chunk * plan.planes, K * C) * s.real_stride);
  plan.bytes = ws.total_bytes();
  return plan;
}

std::string FftConvolution::unsupported_reason(const ConvProblem& problem) const {
  if (std::string reason = invalid_problem_reason(problem); !reason.empty()) return reason;
  if (std::string reason = fixed_tile_reason(problem, tiling_, *transforms_); !reason.empty())
    return cat(name_, ": ", reason);
  const Plan plan = make_plan(problem);
  if (plan.single_image_bytes > kMaxWorkspaceBytes)
    return cat(name_, ": transforms of ", plan.shape.rows, "x", plan.shape.cols, " (tiling ",
               tiling_.to_string(), ") for ", problem.key(), " need ",
               plan.single_image_bytes >> 20, " MiB of workspace even one image at a time (limit ",
               kMaxWorkspaceBytes >> 20, " MiB)");
  return {};
}

bool FftConvolution::knob_applies(std::string_view key, const ConvProblem& problem) const {
  if (key == fft_workspace_knob.key()) return true;
  // tiled_geometry's rule: strided problems always run untiled.
  if (key == fft_tile_knob.key()) return problem.stride_h == 1 && problem.stride_w == 1;
  return false;
}

size_t FftConvolution::workspace_bytes(const ConvProblem& problem) const {
  if (!unsupported_reason(problem).empty()) return 0;
  return make_plan(problem).bytes;
}

struct FftConvolution::SavedSpectra {
  cfloat* x = nullptr;  // N x tiles x C planes, image-major
  cfloat* w = nullptr;  // K x C planes, as forward transforms w
};

namespace {

// The layout of ConvCall::saved: one WorkspaceLayout for sizing and slicing.
struct SavedLayout {
  size_t x = 0, w = 0, bytes = 0;
  SavedLayout(const ConvProblem& p, const FftTileGeometry& g, const FftShape& s) {
    WorkspaceLayout layout;
    x = layout.add_floats(2 * p.input.n * g.out_tiles() * p.input.c * s.complex_stride);
    w = layout.add_floats(2 * p.out_channels * p.input.c * s.complex_stride);
    bytes = layout.total_bytes();
  }
};

}  // namespace

size_t FftConvolution::saved_bytes(const ConvProblem& problem) const {
  if (!keep_spectra_ || !unsupported_reason(problem).empty()) return 0;
  const Plan plan = make_plan(problem);
  return SavedLayout(problem, plan.geometry, plan.shape).bytes;
}

FftConvolution::SavedSpectra FftConvolution::saved_spectra(const ConvCall& call,
                                                           const Plan& plan) const {
  if (!call.saved) return {};
  const SavedLayout layout(call.problem, plan.geometry, plan.shape);
  check_saved(name_, call, layout.bytes, "saved-spectra buffer");
  auto at = [&](size_t offset) {
    return reinterpret_cast<cfloat*>(WorkspaceLayout::at(call.saved, offset));
  };
  return {at(layout.x), at(layout.w)};
}

FftTransform& FftConvolution::transform_for(const FftShape& shape) {
  std::lock_guard lock(mutex_);
  if (!cached_transform_ || cached_shape_.rows != shape.rows || cached_shape_.cols != shape.cols ||
      cached_shape_.real_stride != shape.real_stride ||
      cached_shape_.complex_stride != shape.complex_stride) {
    cached_transform_ = transforms_->make(shape);
    cached_shape_ = shape;
  }
  return *cached_transform_;
}

namespace {

// Everything one pass needs, sliced out of the workspace.
struct PassBuffers {
  cfloat* spec_a;
  cfloat* spec_b;
  cfloat* spec_filter;
  float* real;
};

// r2c of `planes` planes of t (from image n0) into `spectra`, packing each block of
// planes just before transforming it so it is still in cache.
void transform_planes(const ExecContext& ex, const char* kernel, FftTransform& transform,
                      const FftShape& s, const Tensor& t, const PlaneMap& map, int64_t n0,
                      int64_t planes, float* real, cfloat* spectra) {
  profiler::KernelScope scope(ex.tracer, kernel, ex.device, ex.lane, transform_flops(s, planes),
                              static_cast<double>(planes) * s.bins() * sizeof(cfloat) +
                                  static_cast<double>(planes * t.shape().h * t.shape().w) * 4.0);
  for_each_plane_block(ex.pool, planes, [&](int64_t first, int64_t count) {
    float* block = real + first * s.real_stride;
    pack_planes(t, map, n0, first, count, s, block);
    transform.forward(block, spectra + first * s.complex_stride, count);
  });
}

// c2r of `planes` spectra, then crop into t (from image n0) with the given step, undoing
// the transform's rows * cols scale.
void inverse_planes(const ExecContext& ex, const char* kernel, FftTransform& transform,
                    const FftShape& s, cfloat* spectra, int64_t planes, float* real, Tensor& t,
                    const PlaneMap& map, int64_t n0) {
  profiler::KernelScope scope(ex.tracer, kernel, ex.device, ex.lane, transform_flops(s, planes),
                              static_cast<double>(planes) * s.bins() * sizeof(cfloat) +
                                  static_cast<double>(planes * t.shape().h * t.shape().w) * 4.0);
  const float scale = 1.0f / static_cast<float>(s.rows * s.cols);
  for_each_plane_block(ex.pool, planes, [&](int64_t first, int64_t count) {
    float* block = real + first * s.real_stride;
    transform.inverse(spectra + first * s.complex_stride, block, count);
    unpack_planes(block, map, first, count, s, t, n0, scale);
  });
}

double cgemm_flops(int64_t I, int64_t J, int64_t L, const FftShape& s) {
  return 8.0 * static_cast<double>(I * J * L) * static_cast<double>(s.bins());
}

}  // namespace

FftConvolution::PassSetup FftConvolution::begin_pass(const ConvCall& call, ConvPass pass,
                                                     const Tensor& a, const Tensor& b,
                                                     const Tensor& out) {
  const ConvProblem& p = call.problem;
  check_conv_args(name_, pass, p, a, b, out);
  if (std::string reason = unsupported_reason(p); !reason.empty())
    fail(ErrorKind::unsupported, reason);
  Plan plan = make_plan(p);
  check_workspace(name_, call, plan.bytes);
  FftTransform& transform = transform_for(plan.shape);
  auto spectrum = [&](size_t offset) {
    return reinterpret_cast<cfloat*>(WorkspaceLayout::at(call.workspace, offset));
  };
  return PassSetup{plan,
                   transform,
                   spectrum(plan.spec_a),
                   spectrum(plan.spec_b),
                   spectrum(plan.spec_filter),
                   WorkspaceLayout::at(call.workspace, plan.real)};
}

void FftConvolution::forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) {
  const ConvProblem& p = call.problem;
  const PassSetup setup = begin_pass(call, ConvPass::forward, x, w, y);
  const Plan& plan = setup.plan;
  const FftShape& s = plan.shape;
  const FftTileGeometry& g = plan.geometry;
  FftTransform& transform = setup.transform;
  const ExecContext& ex = call.exec;
  const FftKernelNames::Pass& names = kernel_names_.fwd;
  const int64_t C = p.input.c, K = p.out_channels, cs = s.complex_stride, tiles = g.out_tiles();
  const SavedSpectra saved = saved_spectra(call, plan);
  saved_by_forward_.forget();
  cfloat* spec_y = setup.spec_b;
  cfloat* spec_w = saved.w ? saved.w : setup.spec_filter;
  float* real = setup.real;

  transform_planes(ex, names.r2c_second, transform, s, w, filter_map(), 0, K * C, real, spec_w);
  for (int64_t n0 = 0; n0 < p.input.n; n0 += plan.chunk) {
    const int64_t images = std::min(plan.chunk, p.input.n - n0);
    cfloat* spec_x = saved.x ? saved.x + n0 * tiles * C * cs : setup.spec_a;
    transform_planes(ex, names.r2c_in, transform, s, x, x_map(p, g), n0, images * tiles * C, real,
                     spec_x);
    {
      // Y[n,t][k] = sum_c conj(W[k][c]) X[n,t][c]: correlation is a product with the
      // conjugate; tiles are independent images to the product.
      profiler::KernelScope scope(
          ex.tracer, names.cgemm, ex.device, ex.lane, cgemm_flops(images * tiles, K, C, s),
          static_cast<double>((images * tiles * (C + K) + K * C) * cs) * 8.0);
      spectral_gemm<false, true>(ex.pool, images * tiles, K, C, s.bins(), cs, {spec_x, C, 1},
                                 {spec_w, 1, C}, spec_y, K, 1, false);
    }
    inverse_planes(ex, names.c2r, transform, s, spec_y, images * tiles * K, real, y, y_map(p, g),
                   n0);
  }
  if (call.saved) saved_by_forward_.remember(call.saved, x.data(), w.data());
}

void FftConvolution::backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w,
                                   Tensor& dx) {
  const ConvProblem& p = call.problem;
  const PassSetup setup = begin_pass(call, ConvPass::backward_data, dy, w, dx);
  const Plan& plan = setup.plan;
  const FftShape& s = plan.shape;
  const FftTileGeometry& g = plan.geometry;
  FftTransform& transform = setup.transform;
  const ExecContext& ex = call.exec;
  const FftKernelNames::Pass& names = kernel_names_.bwd_data;
  const int64_t C = p.input.c, K = p.out_channels, cs = s.complex_stride, tiles = g.in_tiles();
  cfloat* spec_dy = setup.spec_a;
  cfloat* spec_dx = setup.spec_b;
  float* real = setup.real;
  const SavedSpectra saved = saved_spectra(call, plan);
  const bool reuse_w = saved.w && saved_by_forward_.holds(call.saved, nullptr, w.data());
  cfloat* spec_w = reuse_w ? saved.w : setup.spec_filter;
  if (!reuse_w)
    transform_planes(ex, names.r2c_second, transform, s, w, filter_map(), 0, K * C, real, spec_w);
  for (int64_t n0 = 0; n0 < p.input.n; n0 += plan.chunk) {
    const int64_t images = std::min(plan.chunk, p.input.n - n0);
    // Untiled, dy is spread onto the stride-1 output grid: its zeros stand for the
    // skipped positions.
    transform_planes(ex, names.r2c_in, transform, s, dy, dy_data_map(p, g), n0, images * tiles * K,
                     real, spec_dy);
    {
      // DX[n,t][c] = sum_k W[k][c] DY[n,t][k]: the full convolution of dy with w.
      profiler::KernelScope scope(
          ex.tracer, names.cgemm, ex.device, ex.lane, cgemm_flops(images * tiles, C, K, s),
          static_cast<double>((images * tiles * (C + K) + K * C) * cs) * 8.0);
      spectral_gemm<false, false>(ex.pool, images * tiles, C, K, s.bins(), cs, {spec_dy, K, 1},
                                  {spec_w, C, 1}, spec_dx, C, 1, false);
    }
    inverse_planes(ex, names.c2r, transform, s, spec_dx, images * tiles * C, real, dx, dx_map(p, g),
                   n0);
  }
}

void FftConvolution::backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                                     Tensor& dw) {
  const ConvProblem& p = call.problem;
  const PassSetup setup = begin_pass(call, ConvPass::backward_filter, x, dy, dw);
  const Plan& plan = setup.plan;
  const FftShape& s = plan.shape;
  const FftTileGeometry& g = plan.geometry;
  FftTransform& transform = setup.transform;
  const ExecContext& ex = call.exec;
  const FftKernelNames::Pass& names = kernel_names_.bwd_filter;
  const int64_t C = p.input.c, K = p.out_channels, cs = s.complex_stride, tiles = g.out_tiles();
  cfloat* spec_dy = setup.spec_b;
  cfloat* spec_dw = setup.spec_filter;
  float* real = setup.real;
  const SavedSpectra saved = saved_spectra(call, plan);
  const bool reuse_x = saved.x && saved_by_forward_.holds(call.saved, x.data(), nullptr);

  for (int64_t n0 = 0; n0 < p.input.n; n0 += plan.chunk) {
    const int64_t images = std::min(plan.chunk, p.input.n - n0);
    cfloat* spec_x = reuse_x ? saved.x + n0 * tiles * C * cs : setup.spec_a;
    if (!reuse_x)
      transform_planes(ex, names.r2c_in, transform, s, x, x_map(p, g), n0, images * tiles * C, real,
                       spec_x);
    transform_planes(ex, names.r2c_second, transform, s, dy, dy_filter_map(p, g), n0,
                     images * tiles * K, real, spec_dy);
    // DW[k][c] += sum_(n,t) conj(DY[n,t][k]) X[n,t][c]: the correlation of x with dy,
    // summed over the batch and the tiles in the frequency domain, chunk after chunk
    // (backward filter accumulates its spectra across chunks), then one inverse.
    profiler::KernelScope scope(ex.tracer, names.cgemm, ex.device, ex.lane,
                                cgemm_flops(K, C, images * tiles, s),
                                static_cast<double>((images * tiles * (C + K) + K * C) * cs) * 8.0);
    spectral_gemm<true, false>(ex.pool, K, C, images * tiles, s.bins(), cs, {spec_dy, 1, K},
                               {spec_x, C, 1}, spec_dw, C, 1, n0 > 0);
  }
  inverse_planes(ex, names.c2r, transform, s, spec_dw, K * C, real, dw, filter_map(), 0);
}

}  // namespace tunescope::cpu
