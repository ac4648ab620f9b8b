// cuDNN convolution algorithms and their registration (see ConvCudnn.h).
#include "kernels/cuda/ConvCudnn.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "core/base/AlignedBuffer.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaDevice.h"
#include "kernels/cuda/CudaMemory.h"
#include "kernels/cuda/StreamHandles.h"
#include "kernels/shared/ConvArgs.h"  // the argument checks every conv algorithm shares
#include "profiler/Tracer.h"

namespace tunescope::cuda {

struct ConvCudnn::ProblemState {
  std::string reason;  // empty: runnable
  std::unique_ptr<CudnnConvDescriptors> descriptors;
  CudnnAlgorithmFamily algorithms;
  size_t workspace_bytes = 0;  // the largest of the three passes
};

namespace {

constexpr CudnnPass kPasses[] = {CudnnPass::forward, CudnnPass::backward_data,
                                 CudnnPass::backward_filter};
constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;  // beta = 0: cuDNN overwrites the output without reading it

ConvPass conv_pass(CudnnPass pass) {
  switch (pass) {
    case CudnnPass::forward: return ConvPass::forward;
    case CudnnPass::backward_data: return ConvPass::backward_data;
    case CudnnPass::backward_filter: return ConvPass::backward_filter;
  }
  return ConvPass::forward;
}

int algorithm_value(const CudnnAlgorithmFamily& family, CudnnPass pass) {
  switch (pass) {
    case CudnnPass::forward: return family.forward;
    case CudnnPass::backward_data: return family.backward_data;
    case CudnnPass::backward_filter: return family.backward_filter;
  }
  return 0;
}

const CudnnAlgorithmInfo& algorithm_info(CudnnPass pass, int value) {
  return cudnn_algorithms(pass)[static_cast<size_t>(value)];
}

std::string algorithm_label(CudnnPass pass, int value) {
  const auto algorithms = cudnn_algorithms(pass);
  if (value >= 0 && static_cast<size_t>(value) < algorithms.size())
    return algorithms[static_cast<size_t>(value)].name;
  return cat("#", value);
}

// cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t share their fields' names.
template <typename Perf>
std::vector<CudnnFindResult> find_results(const std::vector<Perf>& perf, int returned) {
  std::vector<CudnnFindResult> results;
  for (int i = 0; i < returned && i < static_cast<int>(perf.size()); ++i) {
    const Perf& p = perf[static_cast<size_t>(i)];
    results.push_back({static_cast<int>(p.algo), p.status, p.time, p.memory, p.mathType});
  }
  return results;
}

// The three operands of a pass by role: forward reads x and w and writes y; backward
// data reads y (dy) and w and writes x (dx); backward filter reads x and y (dy) and
// writes w (dw).
struct PassOperands {
  const void* x;
  const void* w;
  const void* y;
};

// The one cuDNN call of `pass` with alpha = 1, beta = 0; its status.
cudnnStatus_t launch(cudnnHandle_t handle, const CudnnConvDescriptors& d, CudnnPass pass,
                     int algorithm, const PassOperands& t, void* workspace,
                     size_t workspace_bytes) {
  // cuDNN takes the written operand as void*; it is the caller's output tensor.
  switch (pass) {
    case CudnnPass::forward:
      return cudnnConvolutionForward(handle, &kOne, d.x(), t.x, d.w(), t.w, d.conv(),
                                     static_cast<cudnnConvolutionFwdAlgo_t>(algorithm), workspace,
                                     workspace_bytes, &kZero, d.y(), const_cast<void*>(t.y));
    case CudnnPass::backward_data:
      return cudnnConvolutionBackwardData(handle, &kOne, d.w(), t.w, d.y(), t.y, d.conv(),
                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(algorithm),
                                          workspace, workspace_bytes, &kZero, d.x(),
                                          const_cast<void*>(t.x));
    case CudnnPass::backward_filter:
      return cudnnConvolutionBackwardFilter(handle, &kOne, d.x(), t.x, d.y(), t.y, d.conv(),
                                            static_cast<cudnnConvolutionBwdFilterAlgo_t>(algorithm),
                                            workspace, workspace_bytes, &kZero, d.w(),
                                            const_cast<void*>(t.w));
  }
  return CUDNN_STATUS_BAD_PARAM;
}

size_t tensor_bytes(const CudnnTensorParams& t) {
  return static_cast<size_t>(t.n) * static_cast<size_t>(t.c) * static_cast<size_t>(t.h) *
         static_cast<size_t>(t.w) * sizeof(float);
}

size_t filter_bytes(const CudnnFilterParams& f) {
  return static_cast<size_t>(f.k) * static_cast<size_t>(f.c) * static_cast<size_t>(f.r) *
         static_cast<size_t>(f.s) * sizeof(float);
}

// Device buffers of one problem's size on which algorithms are tried before a layer
// relies on them (find's timings, a fixed family's trial run). Never the caller's
// tensors: the passes write y, x and w in turn.
struct ProbeBuffers {
  AlignedBuffer x, w, y, workspace;

  ProbeBuffers(const CudnnConvParams& p, MemorySpace& memory, size_t workspace_bytes)
      : x(tensor_bytes(p.x), memory),
        w(filter_bytes(p.w), memory),
        y(tensor_bytes(p.y), memory),
        workspace(workspace_bytes, memory) {}
  PassOperands operands() const { return {x.data(), w.data(), y.data()}; }
};

std::vector<CudnnFindResult> find_pass(cudnnHandle_t handle, const CudnnConvDescriptors& d,
                                       CudnnPass pass, ProbeBuffers& s) {
  const std::string context = cat("cudnn:find timing the ", to_string(pass), " algorithms");
  int max_results = 0;
  int returned = 0;
  switch (pass) {
    case CudnnPass::forward: {
      TS_CUDA_CHECK_CTX(cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &max_results), context);
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(max_results));
      TS_CUDA_CHECK_CTX(
          cudnnFindConvolutionForwardAlgorithmEx(
              handle, d.x(), s.x.data(), d.w(), s.w.data(), d.conv(), d.y(), s.y.data(),
              max_results, &returned, perf.data(), s.workspace.data(), s.workspace.bytes()),
          context);
      return find_results(perf, returned);
    }
    case CudnnPass::backward_data: {
      TS_CUDA_CHECK_CTX(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(handle, &max_results),
                        context);
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<size_t>(max_results));
      TS_CUDA_CHECK_CTX(
          cudnnFindConvolutionBackwardDataAlgorithmEx(
              handle, d.w(), s.w.data(), d.y(), s.y.data(), d.conv(), d.x(), s.x.data(),
              max_results, &returned, perf.data(), s.workspace.data(), s.workspace.bytes()),
          context);
      return find_results(perf, returned);
    }
    case CudnnPass::backward_filter: {
      TS_CUDA_CHECK_CTX(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(handle, &max_results),
                        context);
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<size_t>(max_results));
      TS_CUDA_CHECK_CTX(
          cudnnFindConvolutionBackwardFilterAlgorithmEx(
              handle, d.x(), s.x.data(), d.y(), s.y.data(), d.conv(), d.w(), s.w.data(),
              max_results, &returned, perf.data(), s.workspace.data(), s.workspace.bytes()),
          context);
      return find_results(perf, returned);
    }
  }
  return {};
}

// The cuDNN handle bound to the lane's stream.
cudnnHandle_t handle_of(const ConvCall& call) {
  return handles_for(call.exec.stream.as<CUstream_st>()).cudnn;
}

// A range name that outlives the tracer's use of it.
const char* traced(const ConvCall& call, const std::string& name) {
  return call.exec.tracer ? call.exec.tracer->intern(name) : nullptr;
}

}  // namespace

std::string cudnn_documented_limit(const CudnnAlgorithmInfo& algorithm, const ConvProblem& p) {
  const std::string what =
      cat("cuDNN's ", to_string(algorithm.pass), " algorithm ", algorithm.name);
  if (!algorithm.implemented) return cat(what, " is documented as not implemented");
  const std::string name = algorithm.name;
  const bool fft = name == "fft", fft_tiling = name == "fft_tiling";
  const bool winograd = name == "winograd", winograd_nonfused = name == "winograd_nonfused";
  if (!fft && !fft_tiling && !winograd && !winograd_nonfused) return {};
  // The FFT and Winograd algorithms of all three passes share these limits. cuDNN lets
  // FFT tiling use stride 2 for some filters; stride 1 is the limit every version states.
  if (p.stride_h != 1 || p.stride_w != 1)
    return cat(what, " needs stride 1, not ", p.stride_h, "x", p.stride_w);
  if (fft || fft_tiling) {
    if (p.layout != Layout::NCHW) return cat(what, " takes NCHW (HW-packed) tensors only");
    if (p.pad_h >= p.kernel_h || p.pad_w >= p.kernel_w)
      return cat(what, " needs padding smaller than the filter, not ", p.pad_h, "x", p.pad_w,
                 " for ", p.kernel_h, "x", p.kernel_w);
  }
  if (fft && (p.input.h + 2 * p.pad_h > 256 || p.input.w + 2 * p.pad_w > 256))
    return cat(what, " needs the padded input within 256x256, not ", p.input.h + 2 * p.pad_h, "x",
               p.input.w + 2 * p.pad_w);
  if (fft_tiling && (p.kernel_h > 32 || p.kernel_w > 32))
    return cat(what, " needs a filter within 32x32, not ", p.kernel_h, "x", p.kernel_w);
  if (winograd && (p.kernel_h != 3 || p.kernel_w != 3))
    return cat(what, " needs a 3x3 filter, not ", p.kernel_h, "x", p.kernel_w);
  if (winograd_nonfused && !(p.kernel_h == p.kernel_w && (p.kernel_h == 3 || p.kernel_h == 5)))
    return cat(what, " needs a 3x3 or 5x5 filter, not ", p.kernel_h, "x", p.kernel_w);
  return {};
}

std::optional<CudnnFindResult> pick_cudnn_find_winner(std::span<const CudnnFindResult> results,
                                                      cudnnMathType_t math,
                                                      size_t workspace_limit) {
  std::optional<CudnnFindResult> best;
  for (const CudnnFindResult& r : results) {
    if (r.status != CUDNN_STATUS_SUCCESS || r.math != math || r.memory > workspace_limit) continue;
    if (!best || r.time_ms < best->time_ms) best = r;
  }
  return best;
}

ConvCudnn::ConvCudnn(CudnnAlgorithmFamily family) : ConvCudnn(family.registered_name, family, 0) {}

ConvCudnn::ConvCudnn(std::string name, std::optional<CudnnAlgorithmFamily> family,
                     size_t find_workspace_limit)
    : name_(std::move(name)),
      family_(std::move(family)),
      find_workspace_limit_(find_workspace_limit) {
  for (CudnnPass pass : kPasses)
    range_names_[static_cast<int>(pass)] = cat(name_, ".", to_string(pass));
}

std::unique_ptr<ConvCudnn> ConvCudnn::find(size_t workspace_limit) {
  return std::unique_ptr<ConvCudnn>(new ConvCudnn(kCudnnFindName, std::nullopt, workspace_limit));
}

ConvCudnn::~ConvCudnn() = default;

const ConvCudnn::ProblemState& ConvCudnn::state(const ConvProblem& problem) const {
  std::lock_guard lock(mutex_);
  std::unique_ptr<ProblemState>& slot = states_[problem.key()];
  if (!slot) slot = prepare(problem);
  return *slot;
}

std::unique_ptr<ConvCudnn::ProblemState> ConvCudnn::prepare(const ConvProblem& problem) const {
  auto s = std::make_unique<ProblemState>();
  s->reason = invalid_problem_reason(problem);
  if (!s->reason.empty()) return s;
  if (family_)
    for (CudnnPass pass : kPasses) {
      s->reason =
          cudnn_documented_limit(algorithm_info(pass, algorithm_value(*family_, pass)), problem);
      if (!s->reason.empty()) return s;
    }
  s->reason = cuda_unavailable_reason();
  if (!s->reason.empty()) return s;
  try {
    int device = 0;
    TS_CUDA_CHECK(cudaGetDevice(&device));
    MemorySpace& memory = CudaMemory::of_device(device);
    // The default stream's handle serves the queries and trials: they run before any
    // lane uses the layer, and finish before this returns.
    const cudnnHandle_t handle = handles_for(nullptr).cudnn;
    s->descriptors = std::make_unique<CudnnConvDescriptors>(problem);
    const CudnnConvDescriptors& d = *s->descriptors;
    s->algorithms = family_ ? *family_ : find_algorithms(handle, d, memory);
    for (CudnnPass pass : kPasses) {
      const CudnnAlgorithmAvailability row = query_cudnn_algorithm(
          handle, d, algorithm_info(pass, algorithm_value(s->algorithms, pass)));
      if (!row.supported) {
        s->reason = cat("cuDNN cannot run its ", to_string(pass), " algorithm ", row.algorithm.name,
                        " for this problem: ", row.reason);
        return s;
      }
      s->workspace_bytes = std::max(s->workspace_bytes, row.workspace_bytes);
    }
    // cuDNN may accept an algorithm's workspace query and still refuse the call, so a
    // family's algorithms run once here, where a refusal is a reason rather than a
    // failed training step. Find's winners have run already.
    if (family_) {
      ProbeBuffers probe(d.params(), memory, s->workspace_bytes);
      for (CudnnPass pass : kPasses) {
        const int value = algorithm_value(s->algorithms, pass);
        const cudnnStatus_t status = launch(handle, d, pass, value, probe.operands(),
                                            probe.workspace.data(), probe.workspace.bytes());
        if (status != CUDNN_STATUS_SUCCESS) {
          s->reason =
              cat("cuDNN refused to run its ", to_string(pass), " algorithm ",
                  algorithm_label(pass, value), " for this problem: ", error_string(status));
          return s;
        }
      }
      TS_CUDA_CHECK_CTX(cudaStreamSynchronize(nullptr),
                        cat("trying ", name_, " on ", problem.key()));
    }
  } catch (const Error& e) {
    s->reason = e.what();
  }
  return s;
}

CudnnAlgorithmFamily ConvCudnn::find_algorithms(cudnnHandle_t handle, const CudnnConvDescriptors& d,
                                                MemorySpace& memory) const {
  // At most the limit, and never more than half of what the device has free, so find
  // does not take the memory the network's tensors need.
  size_t free_bytes = 0, total_bytes = 0;
  TS_CUDA_CHECK_CTX(cudaMemGetInfo(&free_bytes, &total_bytes), "cudnn:find sizing its workspace");
  const size_t limit = std::min(find_workspace_limit_, free_bytes / 2);
  const cudnnMathType_t math = d.params().conv.math;
  ProbeBuffers probe(d.params(), memory, limit);
  int winners[3] = {};
  for (CudnnPass pass : kPasses) {
    const std::vector<CudnnFindResult> results = find_pass(handle, d, pass, probe);
    const std::optional<CudnnFindResult> winner = pick_cudnn_find_winner(results, math, limit);
    if (!winner) {
      std::string tried;
      for (const CudnnFindResult& r : results)
        tried += cat(tried.empty() ? "" : ", ", algorithm_label(pass, r.algorithm),
                     r.math == math ? "" : " (other math)", ": ", error_string(r.status));
      fail(ErrorKind::unsupported, "cuDNN's find ran no ", to_string(pass),
           " algorithm in FP32 within ", limit, " bytes of workspace (",
           tried.empty() ? "none tried" : tried, ")");
    }
    winners[static_cast<int>(pass)] = winner->algorithm;
  }
  return {name_, static_cast<cudnnConvolutionFwdAlgo_t>(winners[0]),
          static_cast<cudnnConvolutionBwdDataAlgo_t>(winners[1]),
          static_cast<cudnnConvolutionBwdFilterAlgo_t>(winners[2])};
}

std::string ConvCudnn::unsupported_reason(const ConvProblem& problem) const {
  return state(problem).reason;
}

size_t ConvCudnn::workspace_bytes(const ConvProblem& problem) const {
  const ProblemState& s = state(problem);
  return s.reason.empty() ? s.workspace_bytes : 0;
}

std::optional<CudnnAlgorithmFamily> ConvCudnn::algorithms(const ConvProblem& problem) const {
  const ProblemState& s = state(problem);
  if (!s.reason.empty()) return std::nullopt;
  return s.algorithms;
}

const ConvCudnn::ProblemState& ConvCudnn::begin_pass(const ConvCall& call, CudnnPass pass,
                                                     const Tensor& in, const Tensor& filter_or_dy,
                                                     const Tensor& out) const {
  check_conv_args(name_, conv_pass(pass), call.problem, in, filter_or_dy, out);
  const ProblemState& s = state(call.problem);
  if (!s.reason.empty())
    fail(ErrorKind::unsupported, "conv ", name_, ".", to_string(pass), " on ", call.problem.key(),
         ": ", s.reason);
  for (const Tensor* t : {&in, &filter_or_dy, &out})
    if (t->on_host())
      fail(ErrorKind::runtime, "conv ", name_, ".", to_string(pass), " on ", call.problem.key(),
           ": tensors must be in device memory, one is in ", t->memory().name());
  check_workspace(name_, call, s.workspace_bytes);
  return s;
}

void ConvCudnn::run(const ConvCall& call, CudnnPass pass, const ProblemState& s, const Tensor& x,
                    const Tensor& w, const Tensor& y) const {
  const std::string& pass_name = range_names_[static_cast<int>(pass)];
  profiler::RangeScope range(call.exec.tracer, traced(call, pass_name),
                             profiler::RangeCategory::phase, call.exec.device, call.exec.lane);
  TS_CUDA_CHECK_CTX(
      launch(handle_of(call), *s.descriptors, pass, algorithm_value(s.algorithms, pass),
             {x.data(), w.data(), y.data()}, call.workspace, call.workspace_bytes),
      cat(pass_name, " on ", call.problem.key()));
}

void ConvCudnn::forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) {
  run(call, CudnnPass::forward, begin_pass(call, CudnnPass::forward, x, w, y), x, w, y);
}

void ConvCudnn::backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) {
  run(call, CudnnPass::backward_data, begin_pass(call, CudnnPass::backward_data, dy, w, dx), dx, w,
      dy);
}

void ConvCudnn::backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                                Tensor& dw) {
  run(call, CudnnPass::backward_filter, begin_pass(call, CudnnPass::backward_filter, x, dy, dw), x,
      dw, dy);
}

namespace {

// One registration per family, and cudnn:find. The families come from static tables,
// so registering needs no device.
const bool registered = [] {
  Registry& registry = Registry::instance();
  for (const CudnnAlgorithmFamily& family : cudnn_algorithm_families())
    registry.add_conv_algorithm("cuda", family.registered_name, [family](const KnobValues&) {
      return std::make_unique<ConvCudnn>(family);
    });
  registry.add_conv_algorithm("cuda", kCudnnFindName,
                              [](const KnobValues&) { return ConvCudnn::find(); });
  return true;
}();

}  // namespace
}  // namespace tunescope::cuda
