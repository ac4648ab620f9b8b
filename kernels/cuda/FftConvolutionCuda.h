// FFT convolution on the cuda backend for any CudaFftTransform: the frame of `fft-cufft`
// (cuFFT) and `fft-own` (our CUDA FFT), which differ only in their transform. The CUDA
// twin of kernels/cpu/FftConvolution.h, with the same mathematics:
//  - operands are zero-padded to rows x cols >= (H + 2 pad) x (W + 2 pad), the
//    transform's good size, so the circular correlation equals the linear one on every
//    output kept; strides are handled in the spatial domain (forward keeps every u-th
//    output, dy is spread onto the stride-1 grid), so every stride costs the same;
//  - every pass is r2c of its operands, the channel sum per frequency bin as one
//    cublasCgemmStridedBatched over the bins (frequency-major spectra make each bin's
//    planes a dense matrix; FP32 math, the lane stream's cuBLAS handle), and c2r with a
//    crop; backward filter accumulates the batch's chunks into one spectrum (beta = 1);
//  - batches larger than the chunk budget run chunk by chunk, in one workspace;
//  - given ConvCall::saved (the engine's fft_workspace=cache policy), forward keeps the
//    spectra of the whole batch's x and of w there, and the backward passes skip their
//    r2c of w (backward data) and of x (backward filter) while they are handed the same
//    buffer and tensor forward saw.
// The passes themselves are FftConvPasses.h's step sequences (tested on the host); this
// class plans the workspace, checks the arguments and runs them with device steps.
// Everything is enqueued on ExecContext::stream; tensors and workspace are device memory.
// Each pass is one profiler range "<name>.<pass>" (the CUPTI tracer records its kernels).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/base/ConvAlgorithm.h"
#include "kernels/cuda/CudaFftTransform.h"
#include "kernels/cuda/FftConvPasses.h"
#include "kernels/shared/ConvArgs.h"
#include "kernels/shared/SavedByForward.h"

namespace tunescope::cuda {

struct FftConvPlan;  // sizes and workspace slices of one problem (FftConvolutionCuda.cpp)
struct FftConvPass;  // what one pass works with

class FftConvolutionCuda : public ConvAlgorithm {
 public:
  // Spectra and padded planes of one chunk of images stay below this (at least one image).
  static constexpr int64_t kDefaultChunkBudgetBytes = int64_t{256} << 20;
  // A problem whose single-image chunk needs more workspace is refused.
  static constexpr int64_t kMaxWorkspaceBytes = int64_t{4} << 30;

  // keep_spectra: whether saved_bytes() offers to keep the forward spectra (the run's
  // fft_workspace knob, kernels/shared/FftWorkspace.h).
  FftConvolutionCuda(std::string name, std::unique_ptr<CudaFftTransformFactory> transforms,
                     int64_t chunk_budget_bytes = kDefaultChunkBudgetBytes,
                     bool keep_spectra = true);
  ~FftConvolutionCuda() override;

  std::string name() const override { return name_; }
  // Never throws. In order: an invalid problem; the transform's size limit; "no CUDA
  // device: ..."; the workspace limit; what the device says when the transform is made
  // (shared memory, cuFFT plan errors).
  std::string unsupported_reason(const ConvProblem& problem) const override;
  // Spectra, padded planes and the transform's own scratch (cuFFT's work area); 0 when
  // unsupported, hence 0 without a device.
  size_t workspace_bytes(const ConvProblem& problem) const override;
  // The spectra of x (N x C planes) and of w (K x C planes); 0 when unsupported.
  size_t saved_bytes(const ConvProblem& problem) const override;
  // fft_workspace, on every problem.
  bool knob_applies(std::string_view key, const ConvProblem& problem) const override;

  void forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) override;
  void backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) override;
  void backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                       Tensor& dw) override;

  // The padded transform size of `problem` (rows x cols).
  CudaFftShape transform_shape(const ConvProblem& problem) const;

 private:
  using Plan = FftConvPlan;
  using PassSetup = FftConvPass;
  Plan make_plan(const ConvProblem& problem) const;
  // The plan with the transform's work area added: makes the transform (needs a device).
  Plan make_full_plan(const ConvProblem& problem) const;
  PassSetup begin_pass(const ConvCall& call, ConvPass pass, const Tensor& a, const Tensor& b,
                       const Tensor& out) const;
  // The transform for `shape`, made on first use and kept (one instance serves one layer).
  CudaFftTransform& transform_for(const CudaFftShape& shape) const;
  // Where in call.saved the spectra of x and w go (null when call.saved is null), and
  // whether they hold what the last forward computed from x (backward filter) or w
  // (backward data); null tensors are not asked about.
  FftConvSaved saved_spectra(const ConvCall& call, const Tensor* x, const Tensor* w) const;

  const std::string name_;
  const std::unique_ptr<CudaFftTransformFactory> transforms_;
  const int64_t chunk_budget_bytes_;
  const bool keep_spectra_;
  std::string range_names_[3];  // "<name>.fwd", ".bwd_data", ".bwd_filter"
  mutable std::mutex mutex_;    // guards the cached transform
  mutable CudaFftShape cached_shape_;
  mutable std::unique_ptr<CudaFftTransform> cached_transform_;
  SavedByForward saved_by_forward_;
};

}  // namespace tunescope::cuda
