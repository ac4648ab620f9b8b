// The interface of every convolution algorithm (direct, gemm, fft-fftw, fft-own,
// cudnn:*...). The engine finds algorithms by name through the Registry and never
// includes a kernels/ header. One instance serves one layer, so an algorithm may
// cache plans or buffers sized for its problem.
//
// Contract for all three passes:
//  - tensors use problem.layout; the filter is shape problem.filter();
//  - outputs are overwritten, never accumulated into;
//  - `workspace` holds at least workspace_bytes(problem) bytes, 64-byte aligned
//    (may be null when that is 0);
//  - every kernel launched is recorded on call.exec.tracer (when not null) with a
//    name "<algorithm>.<fwd|bwd_data|bwd_filter>[.<step>]";
//  - `saved`, when not null, holds saved_bytes(problem) bytes, 64-byte aligned, owned by
//    the layer and passed to all three passes: forward fills it with what the backward
//    passes of the same step would otherwise recompute (FFT: the spectra of x and w),
//    and they reuse it while x (backward filter) or w (backward data) is the tensor that
//    forward saw. The caller changes neither between the forward and backward passes
//    of a step.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/base/ConvProblem.h"
#include "core/base/ExecContext.h"
#include "core/base/Tensor.h"

namespace tunescope {

struct ConvCall {
  const ConvProblem& problem;
  const ExecContext& exec;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  void* saved = nullptr;
  size_t saved_bytes = 0;
};

class ConvAlgorithm {
 public:
  virtual ~ConvAlgorithm() = default;

  virtual std::string name() const = 0;
  // Empty when the algorithm can run `problem`; otherwise the reason it cannot.
  virtual std::string unsupported_reason(const ConvProblem& problem) const = 0;
  bool supports(const ConvProblem& problem) const { return unsupported_reason(problem).empty(); }
  virtual size_t workspace_bytes(const ConvProblem& problem) const = 0;
  // What forward keeps for the backward passes in ConvCall::saved; 0: nothing (nothing
  // worth keeping, or the run's knobs said not to: the FFTs under fft_workspace=reuse).
  virtual size_t saved_bytes(const ConvProblem&) const { return 0; }
  // Whether the knob `key` (core/base/Knob.h: one this algorithm declares, such as
  // fft_tile) changes how this algorithm runs `problem`: the tuner crosses such a knob
  // only with configs where some layer's algorithm says so, since elsewhere every value
  // is the same run.
  virtual bool knob_applies(std::string_view key, const ConvProblem& problem) const {
    return false;
  }

  // y = conv(x, w)
  virtual void forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) = 0;
  // dx = d(loss)/dx given dy
  virtual void backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w,
                             Tensor& dx) = 0;
  // dw = d(loss)/dw given x and dy
  virtual void backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                               Tensor& dw) = 0;
};

}  // namespace tunescope
