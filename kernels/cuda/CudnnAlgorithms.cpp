// cuDNN algorithm names, families, descriptors and workspace query (see CudnnAlgorithms.h).
#include "kernels/cuda/CudnnAlgorithms.h"

#include <array>
#include <limits>

#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"

namespace tunescope::cuda {

namespace {

using P = CudnnPass;

// Enum order of cudnn_ops.h; the static_asserts catch a cuDNN that adds or renumbers one.
constexpr std::array<CudnnAlgorithmInfo, CUDNN_CONVOLUTION_FWD_ALGO_COUNT> kForward{{
    {P::forward, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, "implicit_gemm", true, true},
    {P::forward, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, "implicit_precomp_gemm", true,
     true},
    {P::forward, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, "gemm", true, true},
    {P::forward, CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, "direct", true, false},
    {P::forward, CUDNN_CONVOLUTION_FWD_ALGO_FFT, "fft", true, true},
    {P::forward, CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, "fft_tiling", true, true},
    {P::forward, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, "winograd", true, true},
    {P::forward, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, "winograd_nonfused", true, true},
}};
constexpr std::array<CudnnAlgorithmInfo, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT> kBackwardData{{
    {P::backward_data, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, "algo_0", false, true},
    {P::backward_data, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, "algo_1", true, true},
    {P::backward_data, CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT, "fft", true, true},
    {P::backward_data, CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING, "fft_tiling", true, true},
    {P::backward_data, CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD, "winograd", true, true},
    {P::backward_data, CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED, "winograd_nonfused", true,
     true},
}};
constexpr std::array<CudnnAlgorithmInfo, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT> kBackwardFilter{{
    {P::backward_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, "algo_0", false, true},
    {P::backward_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "algo_1", true, true},
    {P::backward_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT, "fft", true, true},
    {P::backward_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, "algo_3", false, true},
    {P::backward_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD, "winograd", true, false},
    {P::backward_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED, "winograd_nonfused",
     true, true},
    {P::backward_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING, "fft_tiling", true, true},
}};

template <size_t N>
constexpr bool values_in_enum_order(const std::array<CudnnAlgorithmInfo, N>& table) {
  for (size_t i = 0; i < N; ++i)
    if (table[i].value != static_cast<int>(i)) return false;
  return true;
}
static_assert(values_in_enum_order(kForward) && values_in_enum_order(kBackwardData) &&
              values_in_enum_order(kBackwardFilter));

// The backward algorithm of `pass` named like the forward one, or algo_1.
int paired_value(CudnnPass pass, const char* forward_name) {
  for (const CudnnAlgorithmInfo& info : cudnn_algorithms(pass))
    if (info.implemented && std::string(info.name) == forward_name) return info.value;
  return cudnn_algorithm(pass, "algo_1").value;
}

int to_int(int64_t value, const char* what, const ConvProblem& problem) {
  if (value > std::numeric_limits<int>::max())
    fail(ErrorKind::unsupported, "cuDNN: ", what, " = ", value, " does not fit an int (problem ",
         problem.key(), ")");
  return static_cast<int>(value);
}

CudnnTensorParams tensor_params(const Shape4& shape, cudnnTensorFormat_t format,
                                const ConvProblem& p) {
  return {format, to_int(shape.n, "n", p), to_int(shape.c, "c", p), to_int(shape.h, "h", p),
          to_int(shape.w, "w", p)};
}

}  // namespace

const char* to_string(CudnnPass pass) {
  switch (pass) {
    case CudnnPass::forward: return "fwd";
    case CudnnPass::backward_data: return "bwd_data";
    case CudnnPass::backward_filter: return "bwd_filter";
  }
  return "?";
}

std::span<const CudnnAlgorithmInfo> cudnn_algorithms(CudnnPass pass) {
  switch (pass) {
    case CudnnPass::forward: return kForward;
    case CudnnPass::backward_data: return kBackwardData;
    case CudnnPass::backward_filter: return kBackwardFilter;
  }
  return {};
}

const CudnnAlgorithmInfo& cudnn_algorithm(CudnnPass pass, const std::string& name) {
  std::string known;
  for (const CudnnAlgorithmInfo& info : cudnn_algorithms(pass)) {
    if (name == info.name) return info;
    known += (known.empty() ? "" : ", ") + std::string(info.name);
  }
  fail(ErrorKind::usage, "unknown cuDNN ", to_string(pass), " algorithm '", name,
       "' (known: ", known, ")");
}

std::vector<CudnnAlgorithmFamily> cudnn_algorithm_families() {
  std::vector<CudnnAlgorithmFamily> families;
  for (const CudnnAlgorithmInfo& forward : kForward)
    families.push_back(
        {cat("cudnn:", forward.name), static_cast<cudnnConvolutionFwdAlgo_t>(forward.value),
         static_cast<cudnnConvolutionBwdDataAlgo_t>(paired_value(P::backward_data, forward.name)),
         static_cast<cudnnConvolutionBwdFilterAlgo_t>(
             paired_value(P::backward_filter, forward.name))});
  return families;
}

CudnnConvParams cudnn_conv_params(const ConvProblem& problem) {
  problem.validate();
  const cudnnTensorFormat_t format =
      problem.layout == Layout::NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  CudnnConvParams params;
  params.x = tensor_params(problem.input, format, problem);
  params.y = tensor_params(problem.output(), format, problem);
  const Shape4 filter = problem.filter();
  params.w = {format, to_int(filter.n, "k", problem), to_int(filter.c, "c", problem),
              to_int(filter.h, "r", problem), to_int(filter.w, "s", problem)};
  params.conv.pad_h = to_int(problem.pad_h, "pad_h", problem);
  params.conv.pad_w = to_int(problem.pad_w, "pad_w", problem);
  params.conv.stride_h = to_int(problem.stride_h, "stride_h", problem);
  params.conv.stride_w = to_int(problem.stride_w, "stride_w", problem);
  return params;
}

CudnnConvDescriptors::CudnnConvDescriptors(const ConvProblem& problem)
    : params_(cudnn_conv_params(problem)) {
  const std::string context = cat("describing conv ", problem.key());
  // The destructor does not run when a constructor throws: release what exists first.
  try {
    TS_CUDA_CHECK_CTX(cudnnCreateTensorDescriptor(&x_), context);
    TS_CUDA_CHECK_CTX(cudnnCreateFilterDescriptor(&w_), context);
    TS_CUDA_CHECK_CTX(cudnnCreateTensorDescriptor(&y_), context);
    TS_CUDA_CHECK_CTX(cudnnCreateConvolutionDescriptor(&conv_), context);
    const CudnnConvParams& p = params_;
    TS_CUDA_CHECK_CTX(
        cudnnSetTensor4dDescriptor(x_, p.x.format, CUDNN_DATA_FLOAT, p.x.n, p.x.c, p.x.h, p.x.w),
        context);
    TS_CUDA_CHECK_CTX(
        cudnnSetFilter4dDescriptor(w_, CUDNN_DATA_FLOAT, p.w.format, p.w.k, p.w.c, p.w.r, p.w.s),
        context);
    TS_CUDA_CHECK_CTX(
        cudnnSetTensor4dDescriptor(y_, p.y.format, CUDNN_DATA_FLOAT, p.y.n, p.y.c, p.y.h, p.y.w),
        context);
    TS_CUDA_CHECK_CTX(cudnnSetConvolution2dDescriptor(
                          conv_, p.conv.pad_h, p.conv.pad_w, p.conv.stride_h, p.conv.stride_w,
                          p.conv.dilation_h, p.conv.dilation_w, p.conv.mode, p.conv.compute_type),
                      context);
    TS_CUDA_CHECK_CTX(cudnnSetConvolutionMathType(conv_, p.conv.math), context);
  } catch (...) {
    release();
    throw;
  }
}

CudnnConvDescriptors::~CudnnConvDescriptors() { release(); }

void CudnnConvDescriptors::release() {
  // Destroy calls only fail on null/invalid descriptors, which the checks above rule out.
  if (conv_) cudnnDestroyConvolutionDescriptor(conv_);
  if (y_) cudnnDestroyTensorDescriptor(y_);
  if (w_) cudnnDestroyFilterDescriptor(w_);
  if (x_) cudnnDestroyTensorDescriptor(x_);
  conv_ = nullptr;
  y_ = x_ = nullptr;
  w_ = nullptr;
}

Shape4 CudnnConvDescriptors::cudnn_output_shape() const {
  int n = 0, c = 0, h = 0, w = 0;
  TS_CUDA_CHECK(cudnnGetConvolution2dForwardOutputDim(conv_, x_, w_, &n, &c, &h, &w));
  return {n, c, h, w};
}

CudnnHandle::CudnnHandle() { TS_CUDA_CHECK_CTX(cudnnCreate(&handle_), "creating a cuDNN handle"); }

CudnnHandle::~CudnnHandle() {
  if (handle_) cudnnDestroy(handle_);
}

CudnnAlgorithmAvailability query_cudnn_algorithm(cudnnHandle_t handle,
                                                 const CudnnConvDescriptors& d,
                                                 const CudnnAlgorithmInfo& info) {
  CudnnAlgorithmAvailability row;
  row.algorithm = info;
  cudnnStatus_t status = CUDNN_STATUS_NOT_SUPPORTED;
  switch (info.pass) {
    case CudnnPass::forward:
      status = cudnnGetConvolutionForwardWorkspaceSize(
          handle, d.x(), d.w(), d.conv(), d.y(), static_cast<cudnnConvolutionFwdAlgo_t>(info.value),
          &row.workspace_bytes);
      break;
    case CudnnPass::backward_data:
      status = cudnnGetConvolutionBackwardDataWorkspaceSize(
          handle, d.w(), d.y(), d.conv(), d.x(),
          static_cast<cudnnConvolutionBwdDataAlgo_t>(info.value), &row.workspace_bytes);
      break;
    case CudnnPass::backward_filter:
      status = cudnnGetConvolutionBackwardFilterWorkspaceSize(
          handle, d.x(), d.y(), d.conv(), d.w(),
          static_cast<cudnnConvolutionBwdFilterAlgo_t>(info.value), &row.workspace_bytes);
      break;
  }
  row.supported = status == CUDNN_STATUS_SUCCESS;
  if (!row.supported) {
    row.workspace_bytes = 0;
    row.reason = error_string(status);
  }
  return row;
}

std::vector<CudnnAlgorithmAvailability> query_cudnn_algorithms(cudnnHandle_t handle,
                                                               const CudnnConvDescriptors& d,
                                                               CudnnPass pass) {
  std::vector<CudnnAlgorithmAvailability> rows;
  for (const CudnnAlgorithmInfo& info : cudnn_algorithms(pass))
    rows.push_back(query_cudnn_algorithm(handle, d, info));
  return rows;
}

}  // namespace tunescope::cuda
