// Shared by the CUDA FFT tests (host schedule emulation and device transforms): the
// lengths and sizes they cover, random planes, FFTW references in the frequency-major
// layout of CudaFftTransform.h, and the normalised errors with their stated bound.
#pragma once

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "kernels/cuda/CudaFftSchedule.h"

namespace tunescope::cuda::fft_test {

using fft::Cf;
using fft::kMaxLength;
using fft::kMaxStages;

// Stated error bound: max |got - reference| / max |reference| <= 2e-7 * log2(points),
// the bound of the CPU fft-own (tests/kernels/cpu/OwnFftTest.cpp): float round-off grows
// with the number of stages; a wrong twiddle or index gives errors of order 1. Measured
// on the host emulation: at most 4.8e-8 per log2 in 2-D (18x18 round trip), 3.5e-8 in
// 1-D: 4x headroom.
constexpr double kRelTolPerLog2 = 2e-7;

inline double tolerance(int points) {
  return kRelTolPerLog2 * std::max(1.0, std::log2(static_cast<double>(points)));
}

// 1 and the even 2^a 3^b 5^c up to kMaxLength: the lengths the convolutions pad to.
inline std::vector<int> conv_lengths() {
  std::vector<int> lengths = {1};
  int scratch[kMaxStages];
  for (int n = 2; n <= kMaxLength; n += 2)
    if (fft::factor_radices(n, scratch) >= 0) lengths.push_back(n);
  return lengths;
}

inline std::vector<float> random_reals(size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = uniform(rng);
  return v;
}

// FFTW's r2c of plane-major planes, returned frequency-major like the kernel's.
inline std::vector<Cf> fftw_forward(int rows, int cols, int planes, std::vector<float> real) {
  const int n[2] = {rows, cols}, bins = rows * (cols / 2 + 1);
  std::vector<std::complex<float>> out(static_cast<size_t>(bins) * planes);
  fftwf_plan plan = fftwf_plan_many_dft_r2c(2, n, planes, real.data(), nullptr, 1, rows * cols,
                                            reinterpret_cast<fftwf_complex*>(out.data()), nullptr,
                                            planes, 1, FFTW_ESTIMATE);
  fftwf_execute(plan);
  fftwf_destroy_plan(plan);
  std::vector<Cf> result(out.size());
  for (size_t i = 0; i < out.size(); ++i) result[i] = Cf{out[i].real(), out[i].imag()};
  return result;
}

inline std::vector<float> fftw_inverse(int rows, int cols, int planes,
                                       const std::vector<Cf>& spectrum) {
  const int n[2] = {rows, cols};
  std::vector<std::complex<float>> in(spectrum.size());
  for (size_t i = 0; i < in.size(); ++i) in[i] = {spectrum[i].re, spectrum[i].im};
  std::vector<float> real(static_cast<size_t>(rows) * cols * planes);
  fftwf_plan plan =
      fftwf_plan_many_dft_c2r(2, n, planes, reinterpret_cast<fftwf_complex*>(in.data()), nullptr,
                              planes, 1, real.data(), nullptr, 1, rows * cols, FFTW_ESTIMATE);
  fftwf_execute(plan);
  fftwf_destroy_plan(plan);
  return real;
}

inline double spectrum_error(const std::vector<Cf>& got, const std::vector<Cf>& want) {
  double err = 0, peak = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::hypot(double{got[i].re} - want[i].re, double{got[i].im} - want[i].im);
    err = std::isfinite(d) ? std::max(err, d) : INFINITY;
    peak = std::max(peak, std::hypot(double{want[i].re}, double{want[i].im}));
  }
  return err / std::max(peak, 1e-30);
}

inline double real_error(const std::vector<float>& got, const std::vector<float>& want,
                         double scale) {
  double err = 0, peak = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::abs(got[i] - scale * want[i]);
    err = std::isfinite(d) ? std::max(err, d) : INFINITY;
    peak = std::max(peak, std::abs(scale * want[i]));
  }
  return err / std::max(peak, 1e-30);
}

struct Size2d {
  int rows, cols;
};

inline std::vector<Size2d> all_sizes() {
  std::vector<Size2d> sizes;
  for (int n : conv_lengths()) sizes.push_back({n, n});
  for (Size2d s : {Size2d{1, 8},
                   {8, 1},
                   {1, 6},
                   {6, 1},
                   {2, 30},
                   {4, 128},
                   {128, 4},
                   {36, 18},
                   {18, 36},
                   {10, 6},
                   {90, 12},
                   {48, 80},
                   {128, 64},
                   {64, 128},
                   {34 + 2, 34 + 2 + 4},
                   {100, 120}})
    sizes.push_back(s);
  return sizes;
}

}  // namespace tunescope::cuda::fft_test
