// cuDNN's convolution algorithms as tunescope sees them: the name of every forward,
// backward-data and backward-filter algorithm enum (what `cudnn:<name>` conv algorithms
// register under), the family that pairs one forward algorithm with its backward
// algorithms, the descriptor parameters of a ConvProblem in NCHW or NHWC (legacy
// cudnnSet*4dDescriptor API), RAII descriptors, and the per-problem availability and
// workspace query. Names and parameter mapping are pure; the query needs a cuDNN
// handle, i.e. a device.
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/base/ConvProblem.h"

namespace tunescope::cuda {

enum class CudnnPass { forward, backward_data, backward_filter };
// "fwd", "bwd_data", "bwd_filter": the suffixes of ConvAlgorithm kernel names.
const char* to_string(CudnnPass pass);

struct CudnnAlgorithmInfo {
  CudnnPass pass;
  int value;           // the cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t enum value
  const char* name;    // the enum's suffix in lower case: "implicit_gemm", "algo_0", "fft_tiling"
  bool deterministic;  // cuDNN documents algo_0 (both backward passes) and algo_3 as not
  // False for FWD_ALGO_DIRECT and BWD_FILTER_WINOGRAD: declared, but documented as not
  // implemented (cudnnConvolutionForward's supported configurations; the enum's text).
  bool implemented;
};

// Every enum value of the pass below its *_COUNT, in enum order.
std::span<const CudnnAlgorithmInfo> cudnn_algorithms(CudnnPass pass);
// Throws Error(usage) naming the known names when `name` is not an algorithm of `pass`.
const CudnnAlgorithmInfo& cudnn_algorithm(CudnnPass pass, const std::string& name);

// One ConvAlgorithm "cudnn:<forward name>": the forward algorithm with the backward
// algorithms of the same name where that pass has an implemented one (fft, fft_tiling,
// winograd, winograd_nonfused), else the deterministic matrix-product algo_1.
struct CudnnAlgorithmFamily {
  std::string registered_name;  // "cudnn:implicit_gemm"
  cudnnConvolutionFwdAlgo_t forward;
  cudnnConvolutionBwdDataAlgo_t backward_data;
  cudnnConvolutionBwdFilterAlgo_t backward_filter;
};
std::vector<CudnnAlgorithmFamily> cudnn_algorithm_families();

// The arguments of cudnnSetTensor4dDescriptor / cudnnSetFilter4dDescriptor /
// cudnnSetConvolution2dDescriptor for one ConvProblem (float32, cross-correlation as the
// CPU algorithms compute, no dilation). Filters keep the problem's layout: NCHW -> KCRS,
// NHWC -> KRSC, which is what cuDNN's filter formats of the same name mean.
struct CudnnTensorParams {
  cudnnTensorFormat_t format;
  int n, c, h, w;
};
struct CudnnFilterParams {
  cudnnTensorFormat_t format;
  int k, c, r, s;
};
struct CudnnConvolutionParams {
  int pad_h, pad_w, stride_h, stride_w;
  int dilation_h = 1, dilation_w = 1;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  cudnnDataType_t compute_type = CUDNN_DATA_FLOAT;
  // FP32 FMA only: TF32 tensor cores would be a different numeric contract than the CPU
  // reference; allowing them is a tuning knob for a later increment.
  cudnnMathType_t math = CUDNN_FMA_MATH;
};
struct CudnnConvParams {
  CudnnTensorParams x;
  CudnnFilterParams w;
  CudnnTensorParams y;
  CudnnConvolutionParams conv;
};
// Validates the problem; throws Error(unsupported) when a size does not fit cuDNN's int.
CudnnConvParams cudnn_conv_params(const ConvProblem& problem);

// The four descriptors of one problem, created and set from cudnn_conv_params.
class CudnnConvDescriptors {
 public:
  explicit CudnnConvDescriptors(const ConvProblem& problem);
  ~CudnnConvDescriptors();
  CudnnConvDescriptors(const CudnnConvDescriptors&) = delete;
  CudnnConvDescriptors& operator=(const CudnnConvDescriptors&) = delete;

  const CudnnConvParams& params() const { return params_; }
  cudnnTensorDescriptor_t x() const { return x_; }
  cudnnFilterDescriptor_t w() const { return w_; }
  cudnnTensorDescriptor_t y() const { return y_; }
  cudnnConvolutionDescriptor_t conv() const { return conv_; }
  // cuDNN's own output shape (n, c, h, w), to cross-check ConvProblem::output().
  Shape4 cudnn_output_shape() const;

 private:
  void release();

  CudnnConvParams params_;
  cudnnTensorDescriptor_t x_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnTensorDescriptor_t y_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
};

// A cuDNN handle on the current device (cudnnCreate needs one).
class CudnnHandle {
 public:
  CudnnHandle();
  ~CudnnHandle();
  CudnnHandle(const CudnnHandle&) = delete;
  CudnnHandle& operator=(const CudnnHandle&) = delete;
  cudnnHandle_t get() const { return handle_; }

 private:
  cudnnHandle_t handle_ = nullptr;
};

struct CudnnAlgorithmAvailability {
  CudnnAlgorithmInfo algorithm{};
  bool supported = false;
  size_t workspace_bytes = 0;
  std::string reason;  // cuDNN's status text when not supported
};

// Whether cuDNN accepts `algorithm` for the problem and the workspace it needs
// (cudnnGetConvolution*WorkspaceSize, on any handle of the current device). An
// unsupported algorithm is a row with its reason, never an exception: one bad candidate
// must not end a sweep.
CudnnAlgorithmAvailability query_cudnn_algorithm(cudnnHandle_t handle,
                                                 const CudnnConvDescriptors& descriptors,
                                                 const CudnnAlgorithmInfo& algorithm);
// The same for every algorithm of `pass`, in enum order.
std::vector<CudnnAlgorithmAvailability> query_cudnn_algorithms(
    cudnnHandle_t handle, const CudnnConvDescriptors& descriptors, CudnnPass pass);

}  // namespace tunescope::cuda
