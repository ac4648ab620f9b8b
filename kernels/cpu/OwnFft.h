// tunescope's own batched 2-D real FFT for the many small transforms of FFT convolution
// (DESIGN.md problem 2): library FFTs parallelise one large transform, we need
// thousands of 8x8..128x128 ones. Eight planes are transformed at once, one per SIMD
// lane (Vec8), so every butterfly is plain vector arithmetic with no shuffles (the
// kernels are built for AVX-512, AVX2 and plain x86-64 and chosen at run time); rows
// first (real-to-half-complex), then columns (complex), each a mixed-radix Stockham FFT
// (radix 4, one radix 2 when the power of two is odd, then radix 3 and 5) — Stockham
// auto-sorts, so there is no bit-reversal pass. Sizes are 2^a 3^b 5^c, so a convolution
// pads 34 to 36 rather than 64. Layout and scaling are FFTW's (see FftShape in
// FftTransform.h).
#pragma once

#include <complex>
#include <cstdint>
#include <memory>

#include "kernels/cpu/OwnFftIsa.h"

namespace tunescope {
class ThreadPool;
}

namespace tunescope::cpu {

struct OwnFftKernelTable;
struct OwnFftPlan;

// Transforms of one size: rows x cols reals <-> rows x (cols / 2 + 1) bins, both sizes
// that supports() accepts. Cheap to construct (twiddle tables are built once per length
// for the whole process and shared); const methods are safe to call concurrently.
class OwnFft2d {
 public:
  static constexpr int64_t kMaxSize = 4096;
  // 1, or an even n <= kMaxSize with no prime factor but 2, 3 and 5. Even because rows
  // are transformed as complex sequences of half their length.
  static bool supports(int64_t n);

  // Throws Error(unsupported) unless supports(rows) and supports(cols) and the CPU runs
  // `isa` (default: TUNESCOPE_FFT_ISA, else the widest this CPU has; see OwnFftIsa.h).
  OwnFft2d(int64_t rows, int64_t cols, OwnFftIsa isa = default_own_fft_isa());

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t bins() const { return rows_ * (cols_ / 2 + 1); }
  OwnFftIsa isa() const { return isa_; }

  // Unnormalised forward r2c of `count` planes, plane i at real + i * real_stride
  // (floats) and spectrum + i * complex_stride (bins). Strides >= the plane size.
  void forward(const float* real, int64_t real_stride, std::complex<float>* spectrum,
               int64_t complex_stride, int64_t count) const;
  // Unnormalised inverse c2r (the result is rows * cols times the signal) of Hermitian
  // half spectra; `spectrum` is left unchanged.
  void inverse(const std::complex<float>* spectrum, int64_t complex_stride, float* real,
               int64_t real_stride, int64_t count) const;

  // The same, split over `pool` in groups of eight planes (the unit of the vector paths,
  // so results do not depend on the thread count).
  void forward(ThreadPool& pool, const float* real, int64_t real_stride,
               std::complex<float>* spectrum, int64_t complex_stride, int64_t count) const;
  void inverse(ThreadPool& pool, const std::complex<float>* spectrum, int64_t complex_stride,
               float* real, int64_t real_stride, int64_t count) const;

 private:
  int64_t rows_, cols_;
  OwnFftIsa isa_;
  const OwnFftKernelTable* kernels_;
  std::shared_ptr<const OwnFftPlan> plan_;  // twiddle views; the tables live for the process
};

}  // namespace tunescope::cpu
