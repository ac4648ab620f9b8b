// FFT convolution (after Mathieu, Henaff & LeCun) for any FftTransform: every pass is
// r2c of its operands, a complex matrix product per frequency bin over channels, and
// c2r with a crop. Algorithms differ only in their transform: fft-fftw is this class
// with FftwTransformFactory, and fft-own is this class with our own FFT
// (OwnFftTransformFactory).
//
// Inputs are zero-padded to rows x cols >= (H + 2 pad) x (W + 2 pad), the transform's
// good size: large enough that the circular correlation equals the linear one on every
// output we keep. Strides are handled in the spatial domain: forward keeps every u-th
// row of the stride-1 output, and dy is spread onto the stride-1 grid (zeros between)
// for both backward passes, so all strides cost the same transforms.
//
// Large planes with small kernels run tiled (overlap-save, see FftTiling.h): stride-1
// problems may cut each plane into tiles transformed at a small size, chosen per problem
// by choose_fft_tiles from the constructor's FftTileChoice (the run's fft_tile knob); tiles are
// then just more planes to the transforms and the per-bin product.
//
// Given ConvCall::saved (the engine's fft_workspace=cache policy), forward keeps the
// spectra of the whole batch's x (every tile of it) and of w there instead of in the
// workspace, and the backward passes skip their r2c of w (backward data) and of x
// (backward filter).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/base/ConvAlgorithm.h"
#include "kernels/cpu/FftTiling.h"
#include "kernels/cpu/FftTransform.h"
#include "kernels/shared/ConvArgs.h"
#include "kernels/shared/SavedByForward.h"

namespace tunescope::cpu {

// Kernel names must outlive the tracer, so each algorithm passes string literals:
// TUNESCOPE_FFT_KERNEL_NAMES("fft-fftw") builds them from one literal prefix.
struct FftKernelNames {
  struct Pass {
    const char* r2c_in;      // x (forward, backward filter) or dy (backward data)
    const char* r2c_second;  // w (forward, backward data) or dy (backward filter)
    const char* cgemm;
    const char* c2r;
  };
  Pass fwd, bwd_data, bwd_filter;
};

#define TUNESCOPE_FFT_KERNEL_NAMES(algo)                                                \
  ::tunescope::cpu::FftKernelNames {                                                    \
    {algo ".fwd.r2c_x", algo ".fwd.r2c_w", algo ".fwd.cgemm", algo ".fwd.c2r"},         \
        {algo ".bwd_data.r2c_dy", algo ".bwd_data.r2c_w", algo ".bwd_data.cgemm",       \
         algo ".bwd_data.c2r"},                                                         \
        {algo ".bwd_filter.r2c_x", algo ".bwd_filter.r2c_dy", algo ".bwd_filter.cgemm", \
         algo ".bwd_filter.c2r"},                                                       \
  }

class FftConvolution : public ConvAlgorithm {
 public:
  // Spectra and padded planes of one chunk of images stay below chunk_budget_bytes
  // (at least one image per chunk); larger batches run chunk by chunk.
  static constexpr int64_t kDefaultChunkBudgetBytes = int64_t{64} << 20;

  FftConvolution(std::string name, FftKernelNames kernel_names,
                 std::unique_ptr<FftTransformFactory> transforms,
                 int64_t chunk_budget_bytes = kDefaultChunkBudgetBytes,
                 FftTileChoice tiling = FftTileChoice::automatic(), double tiled_flop_weight = 1.0,
                 bool keep_spectra = true);
  ~FftConvolution() override;

  std::string name() const override { return name_; }
  std::string unsupported_reason(const ConvProblem& problem) const override;
  size_t workspace_bytes(const ConvProblem& problem) const override;
  // The spectra of x (N x tiles x C planes) and of w (K x C planes); 0 when made not to
  // keep them (fft_workspace=reuse).
  size_t saved_bytes(const ConvProblem& problem) const override;
  // fft_workspace on every problem; fft_tile on stride-1 ones.
  bool knob_applies(std::string_view key, const ConvProblem& problem) const override;

  void forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) override;
  void backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) override;
  void backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                       Tensor& dw) override;

 private:
  struct Plan;
  struct PassSetup;
  struct SavedSpectra;
  Plan make_plan(const ConvProblem& problem) const;
  // What every pass does first: checks the tensors, the problem and the workspace, then
  // plans the chunks and carves the workspace into spectra and padded planes.
  PassSetup begin_pass(const ConvCall& call, ConvPass pass, const Tensor& a, const Tensor& b,
                       const Tensor& out);
  // The transform for `shape`, created on first use and kept: one instance serves one
  // layer, so the shape rarely changes.
  FftTransform& transform_for(const FftShape& shape);
  // Where in call.saved the spectra of x and w go; null pointers when call.saved is null.
  SavedSpectra saved_spectra(const ConvCall& call, const Plan& plan) const;

  const std::string name_;
  const FftKernelNames kernel_names_;
  const std::unique_ptr<FftTransformFactory> transforms_;
  const int64_t chunk_budget_bytes_;
  const FftTileChoice tiling_;
  const double tiled_flop_weight_;  // see choose_fft_tiles
  const bool keep_spectra_;
  std::mutex mutex_;  // guards the cached transform
  FftShape cached_shape_;
  std::unique_ptr<FftTransform> cached_transform_;
  SavedByForward saved_by_forward_;
};

}  // namespace tunescope::cpu
