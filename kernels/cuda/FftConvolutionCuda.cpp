// FFT convolution on the cuda backend (see FftConvolutionCuda.h): the plan and
// workspace of a problem, the checks, and the device steps the passes of
// FftConvPasses.h run on.
#include "kernels/cuda/FftConvolutionCuda.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaDevice.h"
#include "kernels/cuda/FftConvPasses.h"
#include "kernels/cuda/FftPlaneKernels.h"
#include "kernels/cuda/StreamHandles.h"
#include "kernels/shared/FftWorkspace.h"
#include "kernels/shared/WorkspaceLayout.h"
#include "profiler/Tracer.h"

namespace tunescope::cuda {

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

namespace {

using Plan = FftConvPlan;

// The device steps of one pass: the plane kernels, the transform and cuBLAS, all on the
// lane's stream; every failure names the pass and problem.
class DeviceSteps final : public FftConvSteps {
 public:
  DeviceSteps(CudaFftTransform& transform, void* work, cudaStream_t stream, std::string context)
      : transform_(transform),
        work_(work),
        stream_(stream),
        cublas_(handles_for(stream).cublas),
        context_(std::move(context)) {}

  void pack(const Tensor& t, const PlaneWindow& window, float* real) override {
    TS_CUDA_CHECK_CTX(launch_pack_planes(tensor_view(t), window, real, stream_), context_);
  }
  void r2c(const float* real, fft::Cf* spectrum, int64_t count) override {
    transform_.forward(real, reinterpret_cast<float2*>(spectrum), count, work_, stream_);
  }
  void c2r(fft::Cf* spectrum, float* real, int64_t count) override {
    transform_.inverse(reinterpret_cast<float2*>(spectrum), real, count, work_, stream_);
  }
  void product(const ChannelProduct& p, const fft::Cf* a, const fft::Cf* b, fft::Cf* c) override {
    const cuComplex one = {1.0f, 0.0f}, beta = {p.beta, 0.0f};
    auto op = [](bool conj_transpose) { return conj_transpose ? CUBLAS_OP_C : CUBLAS_OP_N; };
    auto i32 = [](int64_t v) { return static_cast<int>(v); };
    TS_CUDA_CHECK_CTX(
        cublasCgemmStridedBatched(cublas_, op(p.conj_transpose_a), op(p.conj_transpose_b), i32(p.m),
                                  i32(p.n), i32(p.k), &one, reinterpret_cast<const cuComplex*>(a),
                                  i32(p.lda), p.stride_a, reinterpret_cast<const cuComplex*>(b),
                                  i32(p.ldb), p.stride_b, &beta, reinterpret_cast<cuComplex*>(c),
                                  i32(p.ldc), p.stride_c, i32(p.bins)),
        context_);
  }
  void unpack(const float* real, const PlaneWindow& window, float scale, Tensor& t) override {
    TS_CUDA_CHECK_CTX(launch_unpack_planes(real, window, scale, tensor_view(t), stream_), context_);
  }

 private:
  CudaFftTransform& transform_;
  void* work_;
  cudaStream_t stream_;
  cublasHandle_t cublas_;
  std::string context_;
};

const char* traced(const ConvCall& call, const std::string& name) {
  return call.exec.tracer ? call.exec.tracer->intern(name) : nullptr;
}

}  // namespace

struct FftConvPass {
  FftConvFrame frame;
  DeviceSteps steps;
};

FftConvolutionCuda::FftConvolutionCuda(std::string name,
                                       std::unique_ptr<CudaFftTransformFactory> transforms,
                                       int64_t chunk_budget_bytes, bool keep_spectra)
    : name_(std::move(name)),
      transforms_(std::move(transforms)),
      chunk_budget_bytes_(chunk_budget_bytes),
      keep_spectra_(keep_spectra) {
  for (ConvPass pass : {ConvPass::forward, ConvPass::backward_data, ConvPass::backward_filter})
    range_names_[static_cast<int>(pass)] = cat(name_, ".", pass_tag(pass));
}

FftConvolutionCuda::~FftConvolutionCuda() = default;

CudaFftShape FftConvolutionCuda::transform_shape(const ConvProblem& p) const {
  return {transforms_->good_size(p.input.h + 2 * p.pad_h),
          transforms_->good_size(p.input.w + 2 * p.pad_w)};
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
  for (int64_t count : plan.counts)
    plan.work_bytes = std::max(plan.work_bytes, transform.work_bytes(count));
  const CudaFftShape& s = plan.shape;
  const int64_t K = p.out_channels, C = p.input.c;
  WorkspaceLayout ws;
  // cuFFT's work area first: the workspace's own (cudaMalloc) alignment.
  plan.work = ws.add_floats(
      static_cast<int64_t>(ceil_div(static_cast<int64_t>(plan.work_bytes), sizeof(float))));
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
  if (std::string reason = invalid_problem_reason(problem); !reason.empty()) return reason;
  const Plan plan = make_plan(problem);
  if (std::string limit = transforms_->shape_limit(plan.shape); !limit.empty())
    return cat(name_, ": ", limit);
  if (std::string reason = cuda_unavailable_reason(); !reason.empty()) return reason;
  if (plan.single_image_bytes > kMaxWorkspaceBytes)
    return cat(name_, ": transforms of ", plan.shape.rows, "x", plan.shape.cols, " for ",
               problem.key(), " need ", plan.single_image_bytes >> 20,
               " MiB of workspace even one image at a time (limit ", kMaxWorkspaceBytes >> 20,
               " MiB)");
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

namespace {

// The layout of ConvCall::saved: one WorkspaceLayout for sizing and slicing.
struct SavedLayout {
  size_t x = 0, w = 0, bytes = 0;
  SavedLayout(const ConvProblem& p, const CudaFftShape& s) {
    WorkspaceLayout layout;
    x = layout.add_floats(2 * p.input.n * p.input.c * s.bins());
    w = layout.add_floats(2 * p.out_channels * p.input.c * s.bins());
    bytes = layout.total_bytes();
  }
};

}  // namespace

bool FftConvolutionCuda::knob_applies(std::string_view key, const ConvProblem&) const {
  return key == fft_workspace_knob.key();
}

size_t FftConvolutionCuda::saved_bytes(const ConvProblem& problem) const {
  if (!keep_spectra_ || !unsupported_reason(problem).empty()) return 0;
  return SavedLayout(problem, transform_shape(problem)).bytes;
}

FftConvSaved FftConvolutionCuda::saved_spectra(const ConvCall& call, const Tensor* x,
                                               const Tensor* w) const {
  if (!call.saved) return {};
  const SavedLayout layout(call.problem, transform_shape(call.problem));
  check_saved(name_, call, layout.bytes, "saved-spectra buffer");
  FftConvSaved saved;
  saved.x = reinterpret_cast<fft::Cf*>(WorkspaceLayout::at(call.saved, layout.x));
  saved.w = reinterpret_cast<fft::Cf*>(WorkspaceLayout::at(call.saved, layout.w));
  saved.reuse_x = x && saved_by_forward_.holds(call.saved, x->data(), nullptr);
  saved.reuse_w = w && saved_by_forward_.holds(call.saved, nullptr, w->data());
  return saved;
}

FftConvolutionCuda::PassSetup FftConvolutionCuda::begin_pass(const ConvCall& call, ConvPass pass,
                                                             const Tensor& a, const Tensor& b,
                                                             const Tensor& out) const {
  const ConvProblem& p = call.problem;
  check_conv_args(name_, pass, p, a, b, out);
  if (std::string reason = unsupported_reason(p); !reason.empty())
    fail(ErrorKind::unsupported, "conv ", name_, ".", pass_tag(pass), " on ", p.key(), ": ",
         reason);
  for (const Tensor* t : {&a, &b, &out})
    if (t->on_host())
      fail(ErrorKind::runtime, "conv ", name_, ".", pass_tag(pass), " on ", p.key(),
           ": tensors must be in device memory, one is in ", t->memory().name());
  const Plan plan = make_full_plan(p);
  check_workspace(name_, call, plan.bytes);
  auto at = [&](size_t offset) { return WorkspaceLayout::at(call.workspace, offset); };
  const FftConvFrame frame{plan.shape.rows,
                           plan.shape.cols,
                           plan.chunk,
                           reinterpret_cast<fft::Cf*>(at(plan.spec_a)),
                           reinterpret_cast<fft::Cf*>(at(plan.spec_b)),
                           reinterpret_cast<fft::Cf*>(at(plan.spec_filter)),
                           at(plan.real)};
  return PassSetup{frame,
                   DeviceSteps(transform_for(plan.shape), plan.work_bytes ? at(plan.work) : nullptr,
                               call.exec.stream.as<CUstream_st>(),
                               cat(range_names_[static_cast<int>(pass)], " on ", p.key()))};
}

void FftConvolutionCuda::forward(const ConvCall& call, const Tensor& x, const Tensor& w,
                                 Tensor& y) {
  PassSetup s = begin_pass(call, ConvPass::forward, x, w, y);
  profiler::RangeScope range(call.exec.tracer, traced(call, range_names_[0]),
                             profiler::RangeCategory::phase, call.exec.device, call.exec.lane);
  const FftConvSaved saved = saved_spectra(call, nullptr, nullptr);
  saved_by_forward_.forget();
  fft_conv_forward(call.problem, s.frame, s.steps, x, w, y, saved);
  if (call.saved) saved_by_forward_.remember(call.saved, x.data(), w.data());
}

void FftConvolutionCuda::backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w,
                                       Tensor& dx) {
  PassSetup s = begin_pass(call, ConvPass::backward_data, dy, w, dx);
  profiler::RangeScope range(call.exec.tracer, traced(call, range_names_[1]),
                             profiler::RangeCategory::phase, call.exec.device, call.exec.lane);
  fft_conv_backward_data(call.problem, s.frame, s.steps, dy, w, dx,
                         saved_spectra(call, nullptr, &w));
}

void FftConvolutionCuda::backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                                         Tensor& dw) {
  PassSetup s = begin_pass(call, ConvPass::backward_filter, x, dy, dw);
  profiler::RangeScope range(call.exec.tracer, traced(call, range_names_[2]),
                             profiler::RangeCategory::phase, call.exec.device, call.exec.lane);
  fft_conv_backward_filter(call.problem, s.frame, s.steps, x, dy, dw,
                           saved_spectra(call, &x, nullptr));
}

}  // namespace tunescope::cuda
