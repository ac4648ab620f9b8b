// tunescope's own batched 2-D real FFT for the many small transforms of FFT convolution
// (DESIGN.md problem 2): library FFTs parallelise one large transform, we need
// thousands of 8x8..128x128 ones. Eight planes are transformed at once, one per SIMD
// lane (Vec8), so every butterfly is plain vector arithmetic with no shuffles; rows
// first (real-to-half-complex), then columns (complex), each a mixed-radix Stockham FFT
// (radix 4, one radix 2 when the power of two is odd, then radix 3 and 5) — Stockham
// auto-sorts, so there is no bit-reversal pass. Sizes are 2^a 3^b 5^c, so a convolution
// pads 34 to 36 rather than 64. Layout and scaling are FFTW's (see FftShape in
// FftTransform.h).
#pragma once

#include <complex>
#include <cstdint>

namespace tunescope {
class ThreadPool;
}

namespace tunescope::cpu {

// Which kernel transforms full groups of eight planes. `scalar` runs the same code one
// plane at a time; it exists so tests can check the vector path against it (a leftover
// group of fewer than eight planes always runs it).
enum class OwnFftPath { vector, scalar };

struct OwnFftTwiddles;

// Transforms of one size: rows x cols reals <-> rows x (cols / 2 + 1) bins, both sizes
// that supports() accepts. Cheap to construct (twiddle tables are built once per length
// for the whole process and shared); const methods are safe to call concurrently.
class OwnFft2d {
 public:
  static constexpr int64_t kMaxSize = 4096;
  // 1, or an even n <= kMaxSize with no prime factor but 2, 3 and 5. Even because rows
  // are transformed as complex sequences of half their length.
  static bool supports(int64_t n);

  // Throws Error(unsupported) unless supports(rows) and supports(cols).
  OwnFft2d(int64_t rows, int64_t cols);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t bins() const { return rows_ * (cols_ / 2 + 1); }

  // Unnormalised forward r2c of `count` planes, plane i at real + i * real_stride
  // (floats) and spectrum + i * complex_stride (bins). Strides >= the plane size.
  void forward(const float* real, int64_t real_stride, std::complex<float>* spectrum,
               int64_t complex_stride, int64_t count, OwnFftPath path = OwnFftPath::vector) const;
  // Unnormalised inverse c2r (the result is rows * cols times the signal) of Hermitian
  // half spectra; `spectrum` is left unchanged.
  void inverse(const std::complex<float>* spectrum, int64_t complex_stride, float* real,
               int64_t real_stride, int64_t count, OwnFftPath path = OwnFftPath::vector) const;

  // The same, split over `pool` in groups of eight planes (the unit of the vector path,
  // so results do not depend on the thread count).
  void forward(ThreadPool& pool, const float* real, int64_t real_stride,
               std::complex<float>* spectrum, int64_t complex_stride, int64_t count) const;
  void inverse(ThreadPool& pool, const std::complex<float>* spectrum, int64_t complex_stride,
               float* real, int64_t real_stride, int64_t count) const;

 private:
  int64_t rows_, cols_;
  const OwnFftTwiddles* row_twiddles_;  // complex FFT of length cols / 2 (the packed rows)
  const OwnFftTwiddles* col_twiddles_;  // complex FFT of length rows
  const OwnFftTwiddles* real_twiddles_; // cols: exp(-2 pi i k / cols) for the r2c split
};

}  // namespace tunescope::cpu
