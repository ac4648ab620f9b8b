// FFT convolution on the cuda backend (see FftConvolutionCuda.h).
#include "kernels/cuda/FftConvolutionCuda.h"

#include <cublas_v2.h>

#include <algorithm>
#include <vector>

#include "core/base/Error.h"
#include "kernels/cpu/WorkspaceLayout.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaDevice.h"
#include "kernels/cuda/FftPlaneKernels.h"
#include "kernels/cuda/StreamHandles.h"
#include "profiler/Tracer.h"

namespace tunescope::cuda {

using cpu::ceil_div;
using cpu::ConvPass;
using cpu::WorkspaceLayout;

struct FftConvPlan {
  CudaFftShape shape;
  int64_t chunk = 1;   // images per chunk
  int64_t planes = 1;  // max(C, K): planes per image of either operand
  size_t work = 0, spec_a = 0, spec_b = 0, spec_filter = 0, real = 0;
  size_t work_bytes = 0;  // the transform's scratch
  size_t bytes = 0;
  int64_t single_image_bytes = 0;
  // Plane counts the transforms run on: filters (K x C) and a full and the last chunk of
  // images times C and K. The transform's work area must serve each.
  std::vector<int64_t> counts;
};

struct FftConvPass {
  FftConvPlan plan;
  CudaFftTransform& transform;
  void* work;
  float2* spec_a;
  float2* spec_b;
  float2* spec_filter;
  float* real;
  cudaStream_t stream;
  cublasHandle_t cublas;
};

namespace {

using Plan = FftConvPlan;
using PassSetup = FftConvPass;

DeviceTensorView view(const Tensor& t) {
  const Strides4 s = t.strides();
  const Shape4 shape = t.shape();
  // The kernels write through the view only for the pass's output tensor.
  return {const_cast<float*>(t.data()), s.n, s.c, s.h, s.w, shape.c, shape.h, shape.w};
}

// r2c of window.planes planes of t into `spectrum` (frequency-major, window.planes wide).
void transform_planes(const PassSetup& s, const Tensor& t, const PlaneWindow& window, float2* spectrum,
                      const std::string& context) {
  TS_CUDA_CHECK_CTX(launch_pack_planes(view(t), window, s.real, s.stream), context);
  s.transform.forward(s.real, spectrum, window.planes, s.work, s.stream);
}

// c2r of window.planes spectra, cropped into t with the window's offsets and steps,
// undoing the transform's rows * cols scale.
void inverse_planes(const PassSetup& s, float2* spectrum, const PlaneWindow& window, Tensor& t,
                    const std::string& context) {
  s.transform.inverse(spectrum, s.real, window.planes, s.work, s.stream);
  const float scale = 1.0f / static_cast<float>(s.plan.shape.points());
  TS_CUDA_CHECK_CTX(launch_unpack_planes(s.real, window, scale, view(t), s.stream), context);
}

PlaneWindow window(const Plan& plan, int64_t n0, int64_t planes, int64_t top, int64_t left, int64_t step_h,
                   int64_t step_w) {
  return {n0, planes, plan.shape.rows, plan.shape.cols, top, left, step_h, step_w};
}

// One operand of the per-bin product: bin f's matrix is column-major at data + f * stride.
struct BinMatrices {
  const float2* data;
  int ld;
  long long stride;
};

// For every bin f: C_f = op_a(A_f) op_b(B_f) + beta C_f, an m x n result, inner size k.
void per_bin_gemm(const PassSetup& s, cublasOperation_t op_a, cublasOperation_t op_b, int64_t m, int64_t n,
                  int64_t k, const BinMatrices& a, const BinMatrices& b, float2* c, int ldc, long long stride_c,
                  float beta, const std::string& context) {
  const cuComplex one = {1.0f, 0.0f}, b_value = {beta, 0.0f};
  TS_CUDA_CHECK_CTX(cublasCgemmStridedBatched(s.cublas, op_a, op_b, static_cast<int>(m), static_cast<int>(n),
                                              static_cast<int>(k), &one, a.data, a.ld, a.stride, b.data, b.ld,
                                              b.stride, &b_value, c, ldc, stride_c,
                                              static_cast<int>(s.plan.shape.bins())),
                    context);
}

const char* traced(const ConvCall& call, const std::string& name) {
  return call.exec.tracer ? call.exec.tracer->intern(name) : nullptr;
}

}  // namespace

FftConvolutionCuda::FftConvolutionCuda(std::string name, std::unique_ptr<CudaFftTransformFactory> transforms,
                                       int64_t chunk_budget_bytes)
    : name_(std::move(name)), transforms_(std::move(transforms)), chunk_budget_bytes_(chunk_budget_bytes) {
  for (ConvPass pass : {ConvPass::forward, ConvPass::backward_data, ConvPass::backward_filter})
    range_names_[static_cast<int>(pass)] = cat(name_, ".", cpu::pass_tag(pass));
}

FftConvolutionCuda::~FftConvolutionCuda() = default;

CudaFftShape FftConvolutionCuda::transform_shape(const ConvProblem& p) const {
  return {transforms_->good_size(p.input.h + 2 * p.pad_h), transforms_->good_size(p.input.w + 2 * p.pad_w)};
}

FftConvolutionCuda::Plan FftConvolutionCuda::make_plan(const ConvProblem& p) const {
  Plan plan;
  plan.shape = transform_shape(p);
  const CudaFftShape& s = plan.shape;
  const int64_t C = p.input.c, K = p.out_channels, N = p.input.n;
  plan.planes = std::max(C, K);
  const int64_t spectrum_bytes = s.bins() * static_cast<int64_t>(sizeof(float2));
  const int64_t real_bytes = s.points() * static_cast<int64_t>(sizeof(float));
  const int64_t per_image = plan.planes * (2 * spectrum_bytes + real_bytes);
  const int64_t fixed = K * C * (spectrum_bytes + real_bytes);
  const int64_t fit = std::clamp<int64_t>(chunk_budget_bytes_ / per_image, 1, N);
  plan.chunk = ceil_div(N, ceil_div(N, fit));
  plan.single_image_bytes = per_image + fixed;
  const int64_t last = N - (ceil_div(N, plan.chunk) - 1) * plan.chunk;
  plan.counts = {K * C, plan.chunk * C, plan.chunk * K, last * C, last * K};
  return plan;
}

FftConvolutionCuda::Plan FftConvolutionCuda::make_full_plan(const ConvProblem& p) const {
  Plan plan = make_plan(p);
  CudaFftTransform& transform = transform_for(plan.shape);
  for (int64_t count : plan.counts) plan.work_bytes = std::max(plan.work_bytes, transform.work_bytes(count));
  const CudaFftShape& s = plan.shape;
  const int64_t K = p.out_channels, C = p.input.c;
  WorkspaceLayout ws;
  // cuFFT's work area first: the workspace's own (cudaMalloc) alignment.
  plan.work = ws.add_floats(static_cast<int64_t>(ceil_div(static_cast<int64_t>(plan.work_bytes), sizeof(float))));
  plan.spec_a = ws.add_floats(2 * plan.chunk * plan.planes * s.bins());
  plan.spec_b = ws.add_floats(2 * plan.chunk * plan.planes * s.bins());
  plan.spec_filter = ws.add_floats(2 * K * C * s.bins());
  plan.real = ws.add_floats(std::max(plan.chunk * plan.planes, K * C) * s.points());
  plan.bytes = ws.total_bytes();
  return plan;
}

CudaFftTransform& FftConvolutionCuda::transform_for(const CudaFftShape& shape) const {
  std::lock_guard lock(mutex_);
  if (!cached_transform_ || cached_shape_.rows != shape.rows || cached_shape_.cols != shape.cols) {
    cached_transform_.reset();
    cached_transform_ = transforms_->make(shape);
    cached_shape_ = shape;
  }
  return *cached_transform_;
}

std::string FftConvolutionCuda::unsupported_reason(const ConvProblem& problem) const {
  if (std::string reason = cpu::invalid_problem_reason(problem); !reason.empty()) return reason;
  const Plan plan = make_plan(problem);
  if (std::string limit = transforms_->shape_limit(plan.shape); !limit.empty()) return cat(name_, ": ", limit);
  if (std::string reason = cuda_unavailable_reason(); !reason.empty()) return reason;
  if (plan.single_image_bytes > kMaxWorkspaceBytes)
    return cat(name_, ": transforms of ", plan.shape.rows, "x", plan.shape.cols, " for ", problem.key(), " need ",
               plan.single_image_bytes >> 20, " MiB of workspace even one image at a time (limit ",
               kMaxWorkspaceBytes >> 20, " MiB)");
  try {
    make_full_plan(problem);
  } catch (const Error& e) {
    return cat(name_, " on ", problem.key(), ": ", e.what());
  }
  return {};
}

size_t FftConvolutionCuda::workspace_bytes(const ConvProblem& problem) const {
  if (!unsupported_reason(problem).empty()) return 0;
  return make_full_plan(problem).bytes;
}

FftConvolutionCuda::PassSetup FftConvolutionCuda::begin_pass(const ConvCall& call, ConvPass pass, const Tensor& a,
                                                             const Tensor& b, const Tensor& out) const {
  const ConvProblem& p = call.problem;
  cpu::check_conv_args(name_, pass, p, a, b, out);
  if (std::string reason = unsupported_reason(p); !reason.empty())
    fail(ErrorKind::unsupported, "conv ", name_, ".", cpu::pass_tag(pass), " on ", p.key(), ": ", reason);
  for (const Tensor* t : {&a, &b, &out})
    if (t->on_host())
      fail(ErrorKind::runtime, "conv ", name_, ".", cpu::pass_tag(pass), " on ", p.key(),
           ": tensors must be in device memory, one is in ", t->memory().name());
  Plan plan = make_full_plan(p);
  cpu::check_workspace(name_, call, plan.bytes);
  auto spectrum = [&](size_t offset) { return reinterpret_cast<float2*>(WorkspaceLayout::at(call.workspace, offset)); };
  const cudaStream_t stream = static_cast<cudaStream_t>(call.exec.stream);
  return PassSetup{plan,
                   transform_for(plan.shape),
                   plan.work_bytes ? static_cast<char*>(call.workspace) + plan.work : nullptr,
                   spectrum(plan.spec_a),
                   spectrum(plan.spec_b),
                   spectrum(plan.spec_filter),
                   WorkspaceLayout::at(call.workspace, plan.real),
                   stream,
                   handles_for(stream).cublas};
}

void FftConvolutionCuda::forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) {
  const ConvProblem& p = call.problem;
  const PassSetup s = begin_pass(call, ConvPass::forward, x, w, y);
  const std::string& pass_name = range_names_[static_cast<int>(ConvPass::forward)];
  profiler::RangeScope range(call.exec.tracer, traced(call, pass_name), profiler::RangeCategory::phase,
                             call.exec.device, call.exec.lane);
  const std::string context = cat(pass_name, " on ", p.key());
  const Plan& plan = s.plan;
  const int64_t C = p.input.c, K = p.out_channels;
  // W: bin f holds the K x C filter spectra, plane k * C + c.
  transform_planes(s, w, window(plan, 0, K * C, 0, 0, 1, 1), s.spec_filter, context);
  for (int64_t n0 = 0; n0 < p.input.n; n0 += plan.chunk) {
    const int64_t images = std::min(plan.chunk, p.input.n - n0);
    transform_planes(s, x, window(plan, n0, images * C, p.pad_h, p.pad_w, 1, 1), s.spec_a, context);
    // Y_f[n][k] = sum_c conj(W_f[k][c]) X_f[n][c]: correlation is a product with the
    // conjugate. Column-major per bin: Y (K x images) = W^H (C x K)^H X (C x images).
    per_bin_gemm(s, CUBLAS_OP_C, CUBLAS_OP_N, K, images, C, {s.spec_filter, static_cast<int>(C), K * C},
                 {s.spec_a, static_cast<int>(C), images * C}, s.spec_b, static_cast<int>(K), images * K, 0.0f,
                 context);
    inverse_planes(s, s.spec_b, window(plan, n0, images * K, 0, 0, p.stride_h, p.stride_w), y, context);
  }
}

void FftConvolutionCuda::backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) {
  const ConvProblem& p = call.problem;
  const PassSetup s = begin_pass(call, ConvPass::backward_data, dy, w, dx);
  const std::string& pass_name = range_names_[static_cast<int>(ConvPass::backward_data)];
  profiler::RangeScope range(call.exec.tracer, traced(call, pass_name), profiler::RangeCategory::phase,
                             call.exec.device, call.exec.lane);
  const std::string context = cat(pass_name, " on ", p.key());
  const Plan& plan = s.plan;
  const int64_t C = p.input.c, K = p.out_channels;
  transform_planes(s, w, window(plan, 0, K * C, 0, 0, 1, 1), s.spec_filter, context);
  for (int64_t n0 = 0; n0 < p.input.n; n0 += plan.chunk) {
    const int64_t images = std::min(plan.chunk, p.input.n - n0);
    // dy spread onto the stride-1 output grid: its zeros stand for the skipped positions.
    transform_planes(s, dy, window(plan, n0, images * K, 0, 0, p.stride_h, p.stride_w), s.spec_a, context);
    // DX_f[n][c] = sum_k W_f[k][c] DY_f[n][k]: DX (C x images) = W (C x K) DY (K x images).
    per_bin_gemm(s, CUBLAS_OP_N, CUBLAS_OP_N, C, images, K, {s.spec_filter, static_cast<int>(C), K * C},
                 {s.spec_a, static_cast<int>(K), images * K}, s.spec_b, static_cast<int>(C), images * C, 0.0f,
                 context);
    // The padded-input frame starts pad rows and columns before dx.
    inverse_planes(s, s.spec_b, window(plan, n0, images * C, p.pad_h, p.pad_w, 1, 1), dx, context);
  }
}

void FftConvolutionCuda::backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy, Tensor& dw) {
  const ConvProblem& p = call.problem;
  const PassSetup s = begin_pass(call, ConvPass::backward_filter, x, dy, dw);
  const std::string& pass_name = range_names_[static_cast<int>(ConvPass::backward_filter)];
  profiler::RangeScope range(call.exec.tracer, traced(call, pass_name), profiler::RangeCategory::phase,
                             call.exec.device, call.exec.lane);
  const std::string context = cat(pass_name, " on ", p.key());
  const Plan& plan = s.plan;
  const int64_t C = p.input.c, K = p.out_channels;
  for (int64_t n0 = 0; n0 < p.input.n; n0 += plan.chunk) {
    const int64_t images = std::min(plan.chunk, p.input.n - n0);
    transform_planes(s, x, window(plan, n0, images * C, p.pad_h, p.pad_w, 1, 1), s.spec_a, context);
    transform_planes(s, dy, window(plan, n0, images * K, 0, 0, p.stride_h, p.stride_w), s.spec_b, context);
    // DW_f[k][c] (+)= sum_n conj(DY_f[n][k]) X_f[n][c], summed over the chunks:
    // DW (C x K) = X (C x images) DY^H (images x K).
    per_bin_gemm(s, CUBLAS_OP_N, CUBLAS_OP_C, C, K, images, {s.spec_a, static_cast<int>(C), images * C},
                 {s.spec_b, static_cast<int>(K), images * K}, s.spec_filter, static_cast<int>(C), K * C,
                 n0 > 0 ? 1.0f : 0.0f, context);
  }
  inverse_planes(s, s.spec_filter, window(plan, 0, K * C, 0, 0, 1, 1), dw, context);
}

}  // namespace tunescope::cuda
