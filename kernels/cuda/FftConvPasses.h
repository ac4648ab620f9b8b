// The three passes of CUDA FFT convolution as sequences of steps (pack, r2c, per-bin
// channel product, c2r, crop) over one workspace, independent of where the steps run.
// FftConvolutionCuda runs them with device steps (kernels, the transform, cuBLAS); the
// tests run the very same sequences with host steps (the kernels' index math, the
// emulated own FFT, a reference of cuBLAS's strided batched product), so the pass logic
// (windows, operands, leading dimensions, strides, chunking) is checked without a GPU.
#pragma once

#include <cstdint>

#include "core/base/ConvProblem.h"
#include "core/base/Tensor.h"
#include "kernels/cuda/CudaFftSchedule.h"
#include "kernels/cuda/FftPlaneIndex.h"

namespace tunescope::cuda {

// For every frequency bin f: C_f = op_a(A_f) op_b(B_f) + beta C_f, column-major, as
// cublasCgemmStridedBatched computes it (A_f at a + f * stride_a, ...; op_a(A_f) is m x k,
// op_b(B_f) is k x n, C_f is m x n).
struct ChannelProduct {
  bool conj_transpose_a = false, conj_transpose_b = false;  // op = ^H, else none
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  int64_t bins = 0;
  float beta = 0.0f;
};

class FftConvSteps {
 public:
  virtual ~FftConvSteps() = default;
  // Real planes of window.planes planes of t (FftPlaneIndex.h's packed_value).
  virtual void pack(const Tensor& t, const PlaneWindow& window, float* real) = 0;
  // Unnormalised r2c / c2r of `count` planes (CudaFftTransform.h's layout).
  virtual void r2c(const float* real, fft::Cf* spectrum, int64_t count) = 0;
  virtual void c2r(fft::Cf* spectrum, float* real, int64_t count) = 0;
  virtual void product(const ChannelProduct& p, const fft::Cf* a, const fft::Cf* b, fft::Cf* c) = 0;
  // Crop into t (FftPlaneIndex.h's unpack_element).
  virtual void unpack(const float* real, const PlaneWindow& window, float scale, Tensor& t) = 0;
};

// The transform size, chunking and workspace slices one pass works with.
struct FftConvFrame {
  int64_t rows = 1, cols = 1;
  int64_t chunk = 1;               // images per chunk
  fft::Cf* spec_a = nullptr;       // chunk x max(C, K) planes
  fft::Cf* spec_b = nullptr;       // chunk x max(C, K) planes
  fft::Cf* spec_filter = nullptr;  // K x C planes
  float* real = nullptr;           // max(chunk x max(C, K), K x C) planes

  int64_t bins() const { return rows * (cols / 2 + 1); }
};

// The spectra forward keeps for the backward passes (ConvCall::saved, the engine's
// fft_workspace=cache policy): x's of the whole batch (chunk after chunk, each chunk
// frequency-major over its images x C planes, so chunk n0 starts at n0 * C * bins) and w's
// (K x C planes). Null pointers: nothing is kept. `reuse_*`: the buffer holds what forward
// computed from the very tensor this pass is given, so its r2c is skipped.
struct FftConvSaved {
  fft::Cf* x = nullptr;
  fft::Cf* w = nullptr;
  bool reuse_x = false, reuse_w = false;
};

// Forward fills `saved` when its pointers are set.
void fft_conv_forward(const ConvProblem& p, const FftConvFrame& f, FftConvSteps& steps,
                      const Tensor& x, const Tensor& w, Tensor& y, const FftConvSaved& saved = {});
// Reuses saved.w when saved.reuse_w.
void fft_conv_backward_data(const ConvProblem& p, const FftConvFrame& f, FftConvSteps& steps,
                            const Tensor& dy, const Tensor& w, Tensor& dx,
                            const FftConvSaved& saved = {});
// Reuses saved.x when saved.reuse_x.
void fft_conv_backward_filter(const ConvProblem& p, const FftConvFrame& f, FftConvSteps& steps,
                              const Tensor& x, const Tensor& dy, Tensor& dw,
                              const FftConvSaved& saved = {});

// The view of a tensor the index math takes (its data may be device memory).
StridedTensorView tensor_view(const Tensor& t);

}  // namespace tunescope::cuda
