// The CUDA fft-own transform's arithmetic and schedule (CudaFftSchedule.h), emulated on
// the host exactly as the kernel runs it (phase by phase, a block of planes at a time):
// every 1-D length 2^a 3^b 5^c up to 128 against a naive double DFT; every 2-D size the
// convolutions use (1 and even 2^a 3^b 5^c up to 128, square, plus non-square pairs)
// against FFTW and a naive double DFT, forward (r2c) and inverse (c2r), in the
// frequency-major layout with several planes per block and a partial last block; the
// round trip c2r(r2c(x)) = rows * cols * x. Needs no GPU.
// The stated error bound is FftTestSupport.h's.
#include "kernels/cuda/CudaFftSchedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "FftTestSupport.h"

namespace tunescope::cuda::fft {
namespace {

using namespace fft_test;

using cdouble = std::complex<double>;

// The naive DFT of a complex sequence in double (dir -1 forward, +1 inverse, unnormalised).
std::vector<cdouble> naive_dft(const std::vector<cdouble>& x, int dir) {
  const size_t n = x.size();
  std::vector<cdouble> y(n);
  for (size_t k = 0; k < n; ++k)
    for (size_t t = 0; t < n; ++t)
      y[k] += x[t] * std::polar(1.0, dir * 2.0 * M_PI * static_cast<double>(k * t % n) /
                                         static_cast<double>(n));
  return y;
}

TEST(CudaFftRadices, FactorsEverySupportedLengthAndRefusesOtherPrimes) {
  for (int n = 1; n <= 4 * kMaxLength; ++n) {
    int radices[kMaxStages];
    const int count = factor_radices(n, radices);
    int m = n;
    for (int p : {2, 3, 5})
      while (m % p == 0) m /= p;
    const bool smooth = m == 1;
    if (!smooth) {
      EXPECT_EQ(count, -1) << n;
      continue;
    }
    if (count < 0) {  // only lengths needing more stages than the kernel unrolls
      EXPECT_GT(n, kMaxLength) << n;
      continue;
    }
    int product = 1, twos = 0;
    for (int i = 0; i < count; ++i) {
      EXPECT_TRUE(radices[i] == 2 || radices[i] == 3 || radices[i] == 4 || radices[i] == 5) << n;
      product *= radices[i];
      twos += radices[i] == 2;
    }
    EXPECT_EQ(product, n);
    EXPECT_LE(twos, 1) << n << ": radix 4 takes every pair of factors 2";
  }
  int radices[kMaxStages];
  EXPECT_EQ(factor_radices(0, radices), -1);
  EXPECT_EQ(factor_radices(7, radices), -1);
  EXPECT_EQ(factor_radices(1, radices), 0);
}

// Every stage of every 1-D length (odd ones included) against the naive DFT.
TEST(CudaFftStages, OneDimensionalScheduleMatchesNaiveDftForEverySmoothLength) {
  double worst = 0;
  for (int n = 1; n <= kMaxLength; ++n) {
    int radices[kMaxStages];
    const int stages = factor_radices(n, radices);
    if (stages < 0) continue;
    const std::vector<Cf> twiddles = make_twiddles(n);
    const std::vector<float> values =
        random_reals(2 * static_cast<size_t>(n), static_cast<unsigned>(n));
    for (int dir : {-1, 1}) {
      std::vector<Cf> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
      std::vector<cdouble> x(static_cast<size_t>(n));
      for (int t = 0; t < n; ++t) {
        a[t] = Cf{values[2 * t], values[2 * t + 1]};
        x[t] = {values[2 * t], values[2 * t + 1]};
      }
      int p = 1;
      for (int s = 0; s < stages; ++s) {
        for (int i = 0; i < n / radices[s]; ++i)
          stockham_butterfly(a.data(), b.data(), n, p, radices[s], i, twiddles.data(), dir);
        std::swap(a, b);
        p *= radices[s];
      }
      const std::vector<cdouble> ref = naive_dft(x, dir);
      double err = 0, peak = 0;
      for (int k = 0; k < n; ++k) {
        err = std::max(err, std::abs(cdouble(a[k].re, a[k].im) - ref[k]));
        peak = std::max(peak, std::abs(ref[k]));
      }
      const double relative = err / peak;
      worst = std::max(worst, relative / std::max(1.0, std::log2(n)));
      EXPECT_LE(relative, tolerance(n)) << "n = " << n << " dir " << dir;
    }
  }
  std::printf("1-D stages: max relative error per log2(n) %.2e\n", worst);
}

// `planes` planes of rows x cols through the emulated kernel, `group` planes per block.
struct Emulated2d {
  Fft2dGeometry g;
  int planes, group;

  Emulated2d(int rows, int cols, int planes_, int group_)
      : g(rows, cols), planes(planes_), group(group_) {}

  void run(int dir, const float* real_in, float* real_out, const Cf* spectrum_in,
           Cf* spectrum_out) const {
    ASSERT_TRUE(
        emulate_transform(g, dir, planes, group, real_in, real_out, spectrum_in, spectrum_out))
        << g.rows << "x" << g.cols;
  }

  // Frequency-major: bin f of plane p at f * planes + p.
  std::vector<Cf> forward(const std::vector<float>& real) const {
    std::vector<Cf> spectrum(static_cast<size_t>(g.bins()) * planes, Cf{NAN, NAN});
    run(-1, real.data(), nullptr, nullptr, spectrum.data());
    return spectrum;
  }
  std::vector<float> inverse(const std::vector<Cf>& spectrum) const {
    std::vector<float> real(static_cast<size_t>(g.rows) * g.cols * planes, NAN);
    run(1, nullptr, real.data(), spectrum.data(), nullptr);
    return real;
  }
};

// The separable naive 2-D DFT of plane p's reals, frequency-major half spectrum.
std::vector<cdouble> naive_forward(int rows, int cols, int planes, const std::vector<float>& real,
                                   int p) {
  std::vector<std::vector<cdouble>> rowspec(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    std::vector<cdouble> x(static_cast<size_t>(cols));
    for (int q = 0; q < cols; ++q) x[q] = real[(static_cast<size_t>(p) * rows + r) * cols + q];
    rowspec[r] = naive_dft(x, -1);
  }
  const int hc = cols / 2 + 1;
  std::vector<cdouble> out(static_cast<size_t>(rows) * hc);
  for (int c = 0; c < hc; ++c) {
    std::vector<cdouble> x(static_cast<size_t>(rows));
    for (int r = 0; r < rows; ++r) x[r] = rowspec[r][c];
    const std::vector<cdouble> y = naive_dft(x, -1);
    for (int r = 0; r < rows; ++r) out[static_cast<size_t>(r) * hc + c] = y[r];
  }
  return out;
}

class CudaFft2dSchedule : public ::testing::TestWithParam<Size2d> {};

TEST_P(CudaFft2dSchedule, ForwardInverseAndRoundTripMatchFftwAndNaiveDft) {
  const auto [rows, cols] = GetParam();
  // Small planes several to a block with a partial last block, as the kernel groups them.
  const int planes = 5;
  const int group = std::min(3, planes_per_block(Fft2dGeometry(rows, cols), 48 << 10));
  const Emulated2d fft(rows, cols, planes, group);
  const int points = rows * cols;
  const std::vector<float> real =
      random_reals(static_cast<size_t>(points) * planes, static_cast<unsigned>(rows * 1000 + cols));

  const std::vector<Cf> spectrum = fft.forward(real);
  const std::vector<Cf> reference = fftw_forward(rows, cols, planes, real);
  const double forward_error = spectrum_error(spectrum, reference);
  EXPECT_LE(forward_error, tolerance(points)) << "r2c vs FFTW";
  // The naive DFT on the first and last plane (the last is in the partial block).
  for (int p : {0, planes - 1}) {
    const std::vector<cdouble> naive = naive_forward(rows, cols, planes, real, p);
    std::vector<Cf> got(naive.size()), want(naive.size());
    for (size_t f = 0; f < naive.size(); ++f) {
      got[f] = spectrum[f * planes + p];
      want[f] = Cf{static_cast<float>(naive[f].real()), static_cast<float>(naive[f].imag())};
    }
    EXPECT_LE(spectrum_error(got, want), tolerance(points)) << "r2c vs naive DFT, plane " << p;
  }

  const std::vector<float> back = fft.inverse(reference);
  const double inverse_error = real_error(back, fftw_inverse(rows, cols, planes, reference), 1.0);
  const double round_trip_error = real_error(fft.inverse(spectrum), real, points);
  EXPECT_LE(inverse_error, tolerance(points)) << "c2r vs FFTW";
  EXPECT_LE(round_trip_error, tolerance(points)) << "round trip";
  const double log2_points = std::max(1.0, std::log2(points));
  std::printf("%dx%d: per log2(points) r2c %.2e, c2r %.2e, round trip %.2e\n", rows, cols,
              forward_error / log2_points, inverse_error / log2_points,
              round_trip_error / log2_points);
}

INSTANTIATE_TEST_SUITE_P(EverySize, CudaFft2dSchedule, ::testing::ValuesIn(all_sizes()),
                         [](const ::testing::TestParamInfo<Size2d>& info) {
                           return std::to_string(info.param.rows) + "x" +
                                  std::to_string(info.param.cols);
                         });

TEST(CudaFft2dSchedule, RefusesLengthsBeyondTheKernel) {
  EXPECT_EQ(build_schedule(Fft2dGeometry(130, 8), -1).count, 0);
  EXPECT_EQ(build_schedule(Fft2dGeometry(8, 14), 1).count, 0);
  EXPECT_GT(build_schedule(Fft2dGeometry(128, 128), 1).count, 0);
}

TEST(CudaFft2dSchedule, PlanesPerBlockFitTheSharedMemoryTarget) {
  for (int n : conv_lengths()) {
    const Fft2dGeometry g(n, n);
    const int planes = planes_per_block(g, 48 << 10);
    EXPECT_GE(planes, 1);
    EXPECT_LE(planes, kMaxPlanesPerBlock);
    if (planes > 1) {
      EXPECT_LE(block_shared_bytes(g, planes), 48 << 10) << n;
    }
  }
  // 128 x 128: one plane, 2 x (128 x 65 + 1) complex floats (the stride is odd).
  EXPECT_EQ(block_shared_bytes(Fft2dGeometry(128, 128), 1), 2 * (128 * 65 + 1) * 8);
  for (int n : conv_lengths()) EXPECT_EQ(Fft2dGeometry(n, n).plane_stride() % 2, 1) << n;
}

}  // namespace
}  // namespace tunescope::cuda::fft
