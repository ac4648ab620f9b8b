// cuDNN's convolutions as tunescope ConvAlgorithms of the "cuda" backend:
//  - "cudnn:<forward name>" for every CudnnAlgorithmFamily (implicit_gemm, ..., winograd_nonfused):
//    the same three cuDNN algorithms for every problem;
//  - "cudnn:find": per problem and pass, the fastest algorithm cudnnFind*AlgorithmEx
//    measures (cuDNN's own autotuner, the peer the tuner has to beat), within a
//    workspace limit.
// Each pass is one cudnnConvolution{Forward,BackwardData,BackwardFilter} call with
// alpha = 1, beta = 0 (outputs overwritten) on the cuDNN handle of the lane's stream.
// Descriptors, the chosen algorithms and their workspace are worked out once per problem
// and cached in the instance; before a layer relies on a family, its three algorithms
// run once on scratch buffers. The CUPTI tracer records cuDNN's kernels with device
// times; each pass adds one profiler range "<algorithm>.<pass>" so the kernels can be
// attributed to it.
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "core/base/ConvAlgorithm.h"
#include "kernels/cuda/CudnnAlgorithms.h"

namespace tunescope::cuda {

inline constexpr char kCudnnFindName[] = "cudnn:find";
// cudnn:find's default workspace cap: large enough for cuDNN's FFT and Winograd
// algorithms on the resnet18-small and lenet5 layers, small next to an H100/H200's memory.
inline constexpr size_t kCudnnFindWorkspaceLimit = size_t{1} << 30;

// Why cuDNN's API reference rules `algorithm` out for `problem` (empty when it does not),
// from the "supported configurations" of cudnnConvolutionForward, cudnnConvolutionBackwardData
// and cudnnConvolutionBackwardFilter (docs.nvidia.com/deeplearning/cudnn, cudnn_cnn library).
// Needs no device, so the tuner prunes these candidates anywhere; what the documentation
// leaves open is decided by the device query (query_cudnn_algorithms).
std::string cudnn_documented_limit(const CudnnAlgorithmInfo& algorithm, const ConvProblem& problem);

// One row of what cudnnFind*AlgorithmEx reports for a pass.
struct CudnnFindResult {
  int algorithm = 0;  // the pass's algorithm enum value
  cudnnStatus_t status = CUDNN_STATUS_NOT_SUPPORTED;
  float time_ms = 0;
  size_t memory = 0;  // workspace bytes
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

// The fastest row that ran (status success) with the math type tunescope computes in and
// at most `workspace_limit` bytes of workspace; none when no row qualifies. cuDNN also
// times CUDNN_DEFAULT_MATH (TF32 on recent GPUs), which the CPU reference does not
// compute, so those rows never win.
std::optional<CudnnFindResult> pick_cudnn_find_winner(std::span<const CudnnFindResult> results,
                                                      cudnnMathType_t math, size_t workspace_limit);

class ConvCudnn final : public ConvAlgorithm {
 public:
  // A fixed family: its three algorithms for every problem.
  explicit ConvCudnn(CudnnAlgorithmFamily family);
  // cudnn:find, giving cudnnFind*AlgorithmEx at most `workspace_limit` bytes.
  static std::unique_ptr<ConvCudnn> find(size_t workspace_limit = kCudnnFindWorkspaceLimit);
  ~ConvCudnn() override;

  std::string name() const override { return name_; }
  // Never throws. In order: an invalid problem; cuDNN's documented limits of the
  // family's algorithms; "no CUDA device: ..."; what cuDNN says on this device (find
  // found nothing, or an algorithm's workspace query failed). Cached per problem.
  std::string unsupported_reason(const ConvProblem& problem) const override;
  // The largest workspace of the three passes' algorithms (cudnnGetConvolution*WorkspaceSize);
  // 0 when the problem is unsupported, hence 0 without a device.
  size_t workspace_bytes(const ConvProblem& problem) const override;

  void forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) override;
  void backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) override;
  void backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                       Tensor& dw) override;

  // The cuDNN algorithms this instance runs for `problem` (cudnn:find: the winners);
  // none when the problem is unsupported.
  std::optional<CudnnAlgorithmFamily> algorithms(const ConvProblem& problem) const;

 private:
  struct ProblemState;

  ConvCudnn(std::string name, std::optional<CudnnAlgorithmFamily> family,
            size_t find_workspace_limit);
  const ProblemState& state(const ConvProblem& problem) const;
  std::unique_ptr<ProblemState> prepare(const ConvProblem& problem) const;
  CudnnAlgorithmFamily find_algorithms(cudnnHandle_t handle,
                                       const CudnnConvDescriptors& descriptors,
                                       MemorySpace& memory) const;
  // Checks the tensors, the problem and the workspace of one pass; the problem's state.
  const ProblemState& begin_pass(const ConvCall& call, CudnnPass pass, const Tensor& in,
                                 const Tensor& filter_or_dy, const Tensor& out) const;
  // Launches `pass` on the lane's stream; x, w and y by role (y is dy in the backward
  // passes, x is dx in backward data, w is dw in backward filter).
  void run(const ConvCall& call, CudnnPass pass, const ProblemState& state, const Tensor& x,
           const Tensor& w, const Tensor& y) const;

  std::string name_;
  std::optional<CudnnAlgorithmFamily> family_;  // none: cudnn:find
  size_t find_workspace_limit_;
  std::string range_names_[3];  // "<name>.fwd", ".bwd_data", ".bwd_filter"
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::unique_ptr<ProblemState>> states_;  // by ConvProblem::key()
};

}  // namespace tunescope::cuda
