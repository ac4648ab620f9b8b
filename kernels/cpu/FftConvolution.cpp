// FFT convolution on any FftTransform (see FftConvolution.h).
#include "kernels/cpu/FftConvolution.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>

#include "core/base/Error.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/ConvArgs.h"
#include "kernels/cpu/WorkspaceLayout.h"
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
    const float* ap =
        reinterpret_cast<const float*>(a.data + (i * a.stride_outer + l * a.stride_inner) * cs + f0);
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

// Copies planes [first, first + count) of t, counted over (image n0 + plane / C, channel
// plane % C), into zeroed real planes: t(n, c, h, w) lands at (h*dil_h + top, w*dil_w + left).
void pack_planes(const Tensor& t, int64_t n0, int64_t first, int64_t count, const FftShape& s,
                 float* real, int64_t top, int64_t left, int64_t dil_h, int64_t dil_w) {
  const Shape4 shape = t.shape();
  const Strides4 st = t.strides();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t plane = first + i;
    const float* src = t.data() + t.offset(n0 + plane / shape.c, plane % shape.c, 0, 0);
    float* dst = real + i * s.real_stride;
    std::fill_n(dst, s.rows * s.cols, 0.0f);
    for (int64_t h = 0; h < shape.h; ++h) {
      float* row = dst + (h * dil_h + top) * s.cols + left;
      const float* in = src + h * st.h;
      for (int64_t w = 0; w < shape.w; ++w) row[w * dil_w] = in[w * st.w];
    }
  }
}

// The inverse of pack_planes with a step instead of a dilation, scaled:
// t(n, c, h, w) = scale * plane[(h*step_h + top)][w*step_w + left].
void unpack_planes(const float* real, int64_t first, int64_t count, const FftShape& s, Tensor& t,
                   int64_t n0, int64_t top, int64_t left, int64_t step_h, int64_t step_w,
                   float scale) {
  const Shape4 shape = t.shape();
  const Strides4 st = t.strides();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t plane = first + i;
    float* dst = t.data() + t.offset(n0 + plane / shape.c, plane % shape.c, 0, 0);
    const float* src = real + i * s.real_stride;
    for (int64_t h = 0; h < shape.h; ++h) {
      const float* row = src + (h * step_h + top) * s.cols + left;
      float* out = dst + h * st.h;
      for (int64_t w = 0; w < shape.w; ++w) out[w * st.w] = scale * row[w * step_w];
    }
  }
}

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
  FftShape shape;
  int64_t chunk = 1;   // images per chunk
  int64_t planes = 1;  // max(C, K): planes per image of either side
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
                               int64_t chunk_budget_bytes)
    : name_(std::move(name)), kernel_names_(kernel_names), transforms_(std::move(transforms)),
      chunk_budget_bytes_(chunk_budget_bytes) {}

FftConvolution::~FftConvolution() = default;

FftConvolution::Plan FftConvolution::make_plan(const ConvProblem& p) const {
  Plan plan;
  FftShape& s = plan.shape;
  s.rows = transforms_->good_size(p.input.h + 2 * p.pad_h);
  s.cols = transforms_->good_size(p.input.w + 2 * p.pad_w);
  s.real_stride = round_up(s.rows * s.cols, 16);   // 64 bytes of floats
  s.complex_stride = round_up(s.bins(), 8);        // 64 bytes of complex floats
  const int64_t C = p.input.c, K = p.out_channels, N = p.input.n;
  plan.planes = std::max(C, K);
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
  const Plan plan = make_plan(problem);
  if (plan.single_image_bytes > kMaxWorkspaceBytes)
    return cat(name_, ": transforms of ", plan.shape.rows, "x", plan.shape.cols, " for ",
               problem.key(), " need ", plan.single_image_bytes >> 20,
               " MiB of workspace even one image at a time (limit ", kMaxWorkspaceBytes >> 20,
               " MiB)");
  return {};
}

size_t FftConvolution::workspace_bytes(const ConvProblem& problem) const {
  if (!unsupported_reason(problem).empty()) return 0;
  return make_plan(problem).bytes;
}

struct FftConvolution::SavedSpectra {
  cfloat* x = nullptr;  // N x C planes, image-major
  cfloat* w = nullptr;  // K x C planes, as forward transforms w
};

namespace {

// The layout of ConvCall::saved: one WorkspaceLayout for sizing and slicing.
struct SavedLayout {
  size_t x = 0, w = 0, bytes = 0;
  SavedLayout(const ConvProblem& p, const FftShape& s) {
    WorkspaceLayout layout;
    x = layout.add_floats(2 * p.input.n * p.input.c * s.complex_stride);
    w = layout.add_floats(2 * p.out_channels * p.input.c * s.complex_stride);
    bytes = layout.total_bytes();
  }
};

}  // namespace

size_t FftConvolution::saved_bytes(const ConvProblem& problem) const {
  if (!unsupported_reason(problem).empty()) return 0;
  return SavedLayout(problem, make_plan(problem).shape).bytes;
}

FftConvolution::SavedSpectra FftConvolution::saved_spectra(const ConvCall& call,
                                                           const Plan& plan) const {
  if (!call.saved) return {};
  const SavedLayout layout(call.problem, plan.shape);
  if (call.saved_bytes < layout.bytes)
    fail(ErrorKind::runtime, "conv ", name_, " on ", call.problem.key(), ": saved-spectra buffer of ",
         call.saved_bytes, " bytes, needs ", layout.bytes);
  if (reinterpret_cast<std::uintptr_t>(call.saved) % WorkspaceLayout::kAlign != 0)
    fail(ErrorKind::runtime, "conv ", name_, " on ", call.problem.key(),
         ": saved-spectra buffer is not 64-byte aligned");
  auto at = [&](size_t offset) {
    return reinterpret_cast<cfloat*>(WorkspaceLayout::at(call.saved, offset));
  };
  return {at(layout.x), at(layout.w)};
}

bool FftConvolution::holds_forward_spectra(const ConvCall& call, const float* x, const float* w) {
  std::lock_guard lock(mutex_);
  return call.saved && saved_by_forward_ == call.saved && (!x || saved_x_ == x) &&
         (!w || saved_w_ == w);
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
                      const FftShape& s, const Tensor& t, int64_t n0, int64_t planes,
                      float* real, cfloat* spectra, int64_t top, int64_t left, int64_t dil_h,
                      int64_t dil_w) {
  profiler::KernelScope scope(ex.tracer, kernel, ex.device, ex.lane, transform_flops(s, planes),
                              static_cast<double>(planes) * s.bins() * sizeof(cfloat) +
                                  static_cast<double>(planes * t.shape().h * t.shape().w) * 4.0);
  for_each_plane_block(ex.pool, planes, [&](int64_t first, int64_t count) {
    float* block = real + first * s.real_stride;
    pack_planes(t, n0, first, count, s, block, top, left, dil_h, dil_w);
    transform.forward(block, spectra + first * s.complex_stride, count);
  });
}

// c2r of `planes` spectra, then crop into t (from image n0) with the given step, undoing
// the transform's rows * cols scale.
void inverse_planes(const ExecContext& ex, const char* kernel, FftTransform& transform,
                    const FftShape& s, cfloat* spectra, int64_t planes, float* real, Tensor& t,
                    int64_t n0, int64_t top, int64_t left, int64_t step_h, int64_t step_w) {
  profiler::KernelScope scope(ex.tracer, kernel, ex.device, ex.lane, transform_flops(s, planes),
                              static_cast<double>(planes) * s.bins() * sizeof(cfloat) +
                                  static_cast<double>(planes * t.shape().h * t.shape().w) * 4.0);
  const float scale = 1.0f / static_cast<float>(s.rows * s.cols);
  for_each_plane_block(ex.pool, planes, [&](int64_t first, int64_t count) {
    float* block = real + first * s.real_stride;
    transform.inverse(spectra + first * s.complex_stride, block, count);
    unpack_planes(block, first, count, s, t, n0, top, left, step_h, step_w, scale);
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
  if (std::string reason = unsupported_reason(p); !reason.empty()) fail(ErrorKind::unsupported, reason);
  Plan plan = make_plan(p);
  check_workspace(name_, call, plan.bytes);
  FftTransform& transform = transform_for(plan.shape);
  auto spectrum = [&](size_t offset) {
    return reinterpret_cast<cfloat*>(WorkspaceLayout::at(call.workspace, offset));
  };
  return PassSetup{plan, transform, spectrum(plan.spec_a), spectrum(plan.spec_b),
                   spectrum(plan.spec_filter), WorkspaceLayout::at(call.workspace, plan.real)};
}

void FftConvolution::forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) {
  const ConvProblem& p = call.problem;
  const PassSetup setup = begin_pass(call, ConvPass::forward, x, w, y);
  const Plan& plan = setup.plan;
  const FftShape& s = plan.shape;
  FftTransform& transform = setup.transform;
  const ExecContext& ex = call.exec;
  const FftKernelNames::Pass& names = kernel_names_.fwd;
  const int64_t C = p.input.c, K = p.out_channels, cs = s.complex_stride;
  const SavedSpectra saved = saved_spectra(call, plan);
  {
    std::lock_guard lock(mutex_);
    saved_by_forward_ = nullptr;  // until this pass has filled it
  }
  cfloat* spec_y = setup.spec_b;
  cfloat* spec_w = saved.w ? saved.w : setup.spec_filter;
  float* real = setup.real;

  transform_planes(ex, names.r2c_second, transform, s, w, 0, K * C, real, spec_w, 0, 0, 1, 1);
  for (int64_t n0 = 0; n0 < p.input.n; n0 += plan.chunk) {
    const int64_t images = std::min(plan.chunk, p.input.n - n0);
    cfloat* spec_x = saved.x ? saved.x + n0 * C * cs : setup.spec_a;
    transform_planes(ex, names.r2c_in, transform, s, x, n0, images * C, real, spec_x, p.pad_h,
                     p.pad_w, 1, 1);
    {
      // Y[n][k] = sum_c conj(W[k][c]) X[n][c]: correlation is a product with the conjugate.
      profiler::KernelScope scope(ex.tracer, names.cgemm, ex.device, ex.lane,
                                  cgemm_flops(images, K, C, s),
                                  static_cast<double>((images * (C + K) + K * C) * cs) * 8.0);
      spectral_gemm<false, true>(ex.pool, images, K, C, s.bins(), cs, {spec_x, C, 1},
                                 {spec_w, 1, C}, spec_y, K, 1, false);
    }
    inverse_planes(ex, names.c2r, transform, s, spec_y, images * K, real, y, n0, 0, 0, p.stride_h,
                   p.stride_w);
  }
  if (call.saved) {
    std::lock_guard lock(mutex_);
    saved_by_forward_ = call.saved, saved_x_ = x.data(), saved_w_ = w.data();
  }
}

void FftConvolution::backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w,
                                   Tensor& dx) {
  const ConvProblem& p = call.problem;
  const PassSetup setup = begin_pass(call, ConvPass::backward_data, dy, w, dx);
  const Plan& plan = setup.plan;
  const FftShape& s = plan.shape;
  FftTransform& transform = setup.transform;
  const ExecContext& ex = call.exec;
  const FftKernelNames::Pass& names = kernel_names_.bwd_data;
  const int64_t C = p.input.c, K = p.out_channels, cs = s.complex_stride;
  cfloat* spec_dy = setup.spec_a;
  cfloat* spec_dx = setup.spec_b;
  float* real = setup.real;
  const SavedSpectra saved = saved_spectra(call, plan);
  const bool reuse_w = saved.w && holds_forward_spectra(call, nullptr, w.data());
  cfloat* spec_w = reuse_w ? saved.w : setup.spec_filter;
  if (!reuse_w)
    transform_planes(ex, names.r2c_second, transform, s, w, 0, K * C, real, spec_w, 0, 0, 1, 1);
  for (int64_t n0 = 0; n0 < p.input.n; n0 += plan.chunk) {
    const int64_t images = std::min(plan.chunk, p.input.n - n0);
    // dy spread onto the stride-1 output grid: its zeros stand for the skipped positions.
    transform_planes(ex, names.r2c_in, transform, s, dy, n0, images * K, real, spec_dy, 0, 0,
                     p.stride_h, p.stride_w);
    {
      // DX[n][c] = sum_k W[k][c] DY[n][k]: the full convolution of dy with w.
      profiler::KernelScope scope(ex.tracer, names.cgemm, ex.device, ex.lane,
                                  cgemm_flops(images, C, K, s),
                                  static_cast<double>((images * (C + K) + K * C) * cs) * 8.0);
      spectral_gemm<false, false>(ex.pool, images, C, K, s.bins(), cs, {spec_dy, K, 1},
                                  {spec_w, C, 1}, spec_dx, C, 1, false);
    }
    // The padded-input frame starts pad rows and columns before dx.
    inverse_planes(ex, names.c2r, transform, s, spec_dx, images * C, real, dx, n0, p.pad_h,
                   p.pad_w, 1, 1);
  }
}

void FftConvolution::backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                                     Tensor& dw) {
  const ConvProblem& p = call.problem;
  const PassSetup setup = begin_pass(call, ConvPass::backward_filter, x, dy, dw);
  const Plan& plan = setup.plan;
  const FftShape& s = plan.shape;
  FftTransform& transform = setup.transform;
  const ExecContext& ex = call.exec;
  const FftKernelNames::Pass& names = kernel_names_.bwd_filter;
  const int64_t C = p.input.c, K = p.out_channels, cs = s.complex_stride;
  cfloat* spec_dy = setup.spec_b;
  cfloat* spec_dw = setup.spec_filter;
  float* real = setup.real;
  const SavedSpectra saved = saved_spectra(call, plan);
  const bool reuse_x = saved.x && holds_forward_spectra(call, x.data(), nullptr);

  for (int64_t n0 = 0; n0 < p.input.n; n0 += plan.chunk) {
    const int64_t images = std::min(plan.chunk, p.input.n - n0);
    cfloat* spec_x = reuse_x ? saved.x + n0 * C * cs : setup.spec_a;
    if (!reuse_x)
      transform_planes(ex, names.r2c_in, transform, s, x, n0, images * C, real, spec_x, p.pad_h,
                       p.pad_w, 1, 1);
    transform_planes(ex, names.r2c_second, transform, s, dy, n0, images * K, real, spec_dy, 0, 0,
                     p.stride_h, p.stride_w);
    // DW[k][c] += sum_n conj(DY[n][k]) X[n][c]: the correlation of x with dy, summed
    // over the batch in the frequency domain, chunk after chunk (backward filter
    // accumulates its spectra across chunks).
    profiler::KernelScope scope(ex.tracer, names.cgemm, ex.device, ex.lane,
                                cgemm_flops(K, C, images, s),
                                static_cast<double>((images * (C + K) + K * C) * cs) * 8.0);
    spectral_gemm<true, false>(ex.pool, K, C, images, s.bins(), cs, {spec_dy, 1, K},
                               {spec_x, C, 1}, spec_dw, C, 1, n0 > 0);
  }
  inverse_planes(ex, names.c2r, transform, s, spec_dw, K * C, real, dw, 0, 0, 0, 1, 1);
}

}  // namespace tunescope::cpu
