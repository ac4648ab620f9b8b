// The pass sequences of CUDA FFT convolution (see FftConvPasses.h).
#include "kernels/cuda/FftConvPasses.h"

#include <algorithm>

namespace tunescope::cuda {
namespace {

PlaneWindow window(const FftConvFrame& f, int64_t n0, int64_t planes, int64_t top, int64_t left,
                   int64_t step_h, int64_t step_w) {
  return {n0, planes, f.rows, f.cols, top, left, step_h, step_w};
}

void transform_planes(const FftConvFrame& f, FftConvSteps& steps, const Tensor& t,
                      const PlaneWindow& win, fft::Cf* spectrum) {
  steps.pack(t, win, f.real);
  steps.r2c(f.real, spectrum, win.planes);
}

// c2r, then the crop, undoing the transform's rows * cols scale.
void inverse_planes(const FftConvFrame& f, FftConvSteps& steps, fft::Cf* spectrum,
                    const PlaneWindow& win, Tensor& t) {
  steps.c2r(spectrum, f.real, win.planes);
  steps.unpack(f.real, win, 1.0f / static_cast<float>(f.rows * f.cols), t);
}

}  // namespace

StridedTensorView tensor_view(const Tensor& t) {
  const Strides4 s = t.strides();
  const Shape4 shape = t.shape();
  // Written through only for the pass's output tensor.
  return {const_cast<float*>(t.data()), s.n, s.c, s.h, s.w, shape.c, shape.h, shape.w};
}

void fft_conv_forward(const ConvProblem& p, const FftConvFrame& f, FftConvSteps& steps,
                      const Tensor& x, const Tensor& w, Tensor& y, const FftConvSaved& saved) {
  const int64_t C = p.input.c, K = p.out_channels;
  // W: bin-major K x C filter spectra, plane k * C + c.
  fft::Cf* spec_w = saved.w ? saved.w : f.spec_filter;
  transform_planes(f, steps, w, window(f, 0, K * C, 0, 0, 1, 1), spec_w);
  for (int64_t n0 = 0; n0 < p.input.n; n0 += f.chunk) {
    const int64_t images = std::min(f.chunk, p.input.n - n0);
    fft::Cf* spec_x = saved.x ? saved.x + n0 * C * f.bins() : f.spec_a;
    transform_planes(f, steps, x, window(f, n0, images * C, p.pad_h, p.pad_w, 1, 1), spec_x);
    // Y_f[n][k] = sum_c conj(W_f[k][c]) X_f[n][c] (correlation is a product with the
    // conjugate): column-major Y_f (K x images) = W_f^H X_f, W_f being C x K.
    steps.product(
        {true, false, K, images, C, C, C, K, K * C, images * C, images * K, f.bins(), 0.0f}, spec_w,
        spec_x, f.spec_b);
    inverse_planes(f, steps, f.spec_b, window(f, n0, images * K, 0, 0, p.stride_h, p.stride_w), y);
  }
}

void fft_conv_backward_data(const ConvProblem& p, const FftConvFrame& f, FftConvSteps& steps,
                            const Tensor& dy, const Tensor& w, Tensor& dx,
                            const FftConvSaved& saved) {
  const int64_t C = p.input.c, K = p.out_channels;
  fft::Cf* spec_w = saved.reuse_w ? saved.w : f.spec_filter;
  if (!saved.reuse_w) transform_planes(f, steps, w, window(f, 0, K * C, 0, 0, 1, 1), spec_w);
  for (int64_t n0 = 0; n0 < p.input.n; n0 += f.chunk) {
    const int64_t images = std::min(f.chunk, p.input.n - n0);
    // dy spread onto the stride-1 output grid: its zeros stand for the skipped positions.
    transform_planes(f, steps, dy, window(f, n0, images * K, 0, 0, p.stride_h, p.stride_w),
                     f.spec_a);
    // DX_f[n][c] = sum_k W_f[k][c] DY_f[n][k]: DX_f (C x images) = W_f (C x K) DY_f (K x images).
    steps.product(
        {false, false, C, images, K, C, K, C, K * C, images * K, images * C, f.bins(), 0.0f},
        spec_w, f.spec_a, f.spec_b);
    // The padded-input frame starts pad rows and columns before dx.
    inverse_planes(f, steps, f.spec_b, window(f, n0, images * C, p.pad_h, p.pad_w, 1, 1), dx);
  }
}

void fft_conv_backward_filter(const ConvProblem& p, const FftConvFrame& f, FftConvSteps& steps,
                              const Tensor& x, const Tensor& dy, Tensor& dw,
                              const FftConvSaved& saved) {
  const int64_t C = p.input.c, K = p.out_channels;
  for (int64_t n0 = 0; n0 < p.input.n; n0 += f.chunk) {
    const int64_t images = std::min(f.chunk, p.input.n - n0);
    fft::Cf* spec_x = saved.reuse_x ? saved.x + n0 * C * f.bins() : f.spec_a;
    if (!saved.reuse_x)
      transform_planes(f, steps, x, window(f, n0, images * C, p.pad_h, p.pad_w, 1, 1), spec_x);
    transform_planes(f, steps, dy, window(f, n0, images * K, 0, 0, p.stride_h, p.stride_w),
                     f.spec_b);
    // DW_f[k][c] (+)= sum_n conj(DY_f[n][k]) X_f[n][c], summed over the chunks:
    // DW_f (C x K) = X_f (C x images) DY_f^H (images x K).
    steps.product({false, true, C, K, images, C, K, C, images * C, images * K, K * C, f.bins(),
                   n0 > 0 ? 1.0f : 0.0f},
                  spec_x, f.spec_b, f.spec_filter);
  }
  inverse_planes(f, steps, f.spec_filter, window(f, 0, K * C, 0, 0, 1, 1), dw);
}

}  // namespace tunescope::cuda
