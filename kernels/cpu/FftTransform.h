// The one part of FFT convolution that depends on an FFT library: batched 2-D
// real-to-complex and complex-to-real transforms of one size. FftConvolution owns all
// convolution logic; `fft-fftw` plugs in FFTW here, `fft-own` plugs in our own FFT.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>

namespace tunescope::cpu {

// Planes of rows x cols reals and their half spectra of rows x (cols / 2 + 1) bins,
// row-major. As in FFTW's plan_many (istride / idist), element (r, c) of real plane i is
// at i * real_stride + (r * cols + c) * real_element_stride floats: element stride 1
// for planes that each fill a block (NCHW), C with real_stride 1 for C planes whose
// elements interleave (NHWC). Spectra are the caller's workspace and always have unit
// element stride, consecutive planes complex_stride bins apart. For unit element stride
// the strides are multiples of 64 bytes so every plane is as aligned as the first.
struct FftShape {
  int64_t rows = 1, cols = 1;
  int64_t real_stride = 1, complex_stride = 1;
  int64_t real_element_stride = 1;

  int64_t bins() const { return rows * (cols / 2 + 1); }
  bool operator==(const FftShape&) const = default;
};

class FftTransform {
 public:
  virtual ~FftTransform() = default;
  // Unnormalised forward transforms of `count` planes. Called concurrently from several
  // threads on disjoint planes; arrays are 64-byte aligned (the first plane's).
  virtual void forward(const float* real, std::complex<float>* spectrum, int64_t count) = 0;
  // Unnormalised inverse (the result is rows * cols times the signal); may overwrite
  // `spectrum`. Same concurrency as forward.
  virtual void inverse(std::complex<float>* spectrum, float* real, int64_t count) = 0;
};

class FftTransformFactory {
 public:
  virtual ~FftTransformFactory() = default;
  // The smallest length >= n this transform handles efficiently.
  virtual int64_t good_size(int64_t n) const = 0;
  virtual std::unique_ptr<FftTransform> make(const FftShape& shape) const = 0;
};

}  // namespace tunescope::cpu
