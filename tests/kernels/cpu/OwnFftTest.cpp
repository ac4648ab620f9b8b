// OwnFft2d against a naive double-precision DFT and against FFTW on every power-of-two
// size 4..128, the mixed-radix sizes (2^a 3^b 5^c) convolutions pad to, square and
// non-square, plus the degenerate 1 and 2, batches 1, 7, 10 and 64 (a single plane, a
// partial vector group, a group plus two single planes, full groups), padded plane
// strides; the round
// trip and 1 vs 3 threads; the fixed-length codelets (lengths up to 20) beside the
// generic stages in one plane; strided real planes (element stride 3 and 16, interleaved
// NHWC-like and blocked) against FFTW with the same strides and the naive DFT; the split
// within each transform against the split over the batch; streamed output against
// cached; every instruction-set path (scalar, AVX2, AVX-512) this CPU runs.
#include <fftw3.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/base/Error.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/FftwTransform.h"
#include "kernels/cpu/OwnFft.h"
#include "kernels/cpu/OwnFftTransform.h"

namespace tunescope::cpu {
namespace {

using cfloat = std::complex<float>;
using cdouble = std::complex<double>;

// Stated error bound: max |own - reference| / max |reference| <= kRelTolPerLog2 * log2(rows *
// cols). Float round-off of an FFT grows with the number of stages; the largest measured value over
// all cases here, mixed radix included, is 6.2e-8 per log2 (1x6 inverse and round trip; 1x8 round
// trip 6.0e-8; 128x128 forward 4e-8), so the bound has over 3x headroom and still catches any wrong
// twiddle or index (errors ~1).
constexpr double kRelTolPerLog2 = 2e-7;

double tolerance(int64_t rows, int64_t cols) {
  return kRelTolPerLog2 * std::max(1.0, std::log2(static_cast<double>(rows * cols)));
}

struct Case {
  int64_t rows, cols, batch;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::to_string(info.param.rows) + "x" + std::to_string(info.param.cols) + "_batch" +
         std::to_string(info.param.batch);
}

std::vector<std::pair<int64_t, int64_t>> all_shapes() {
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (int64_t n = 4; n <= 128; n *= 2) shapes.push_back({n, n});
  // Radix 3 and 5 alone, with 2 and 4, and all together; odd half lengths (6, 10, 18,
  // 30, 50, 90: the packed row FFT has no radix 2 at all).
  for (int64_t n : {6, 10, 12, 18, 20, 24, 30, 36, 40, 48, 50, 60, 72, 90, 96, 100, 120})
    shapes.push_back({n, n});
  for (auto s : std::vector<std::pair<int64_t, int64_t>>{
           {4, 128},
           {128, 4},
           {8, 32},
           {64, 16},
           {16, 8},
           {32, 128},
           {1, 1},
           {1, 8},
           {8, 1},
           {2, 2},
           {2, 16},
           {36, 18},
           {18, 36},
           {6, 10},
           {10, 6},
           {1, 6},
           {6, 1},
           {2, 30},
           {90, 12},
           {48, 80},
           // Codelet lengths (up to 20, OwnFftKernels.h) mixed with each other and with
           // generic ones, row counts that leave a partial row sweep (rows_per_sweep).
           {20, 12},
           {12, 20},
           {10, 16},
           {18, 20},
           {24, 10},
           {30, 20}})
    shapes.push_back(s);
  return shapes;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (auto [r, c] : all_shapes())
    for (int64_t batch : {1, 7, 10, 64}) cases.push_back({r, c, batch});
  return cases;
}

// Planes padded like FftConvolution pads them, plus a little, so strides are exercised.
struct Layout {
  int64_t rows, cols, half, real_stride, complex_stride;
  Layout(int64_t r, int64_t c)
      : rows(r),
        cols(c),
        half(c / 2 + 1),
        real_stride(r * c + 16),
        complex_stride(r * (c / 2 + 1) + 8) {}
};

// Naive separable DFT in double of one plane: rows (real -> half spectrum), then columns.
std::vector<cdouble> naive_forward(const float* x, const Layout& l) {
  const double two_pi = 2.0 * std::acos(-1.0);
  std::vector<cdouble> rowspec(l.rows * l.half), out(l.rows * l.half);
  for (int64_t r = 0; r < l.rows; ++r)
    for (int64_t k = 0; k < l.half; ++k) {
      cdouble sum = 0;
      for (int64_t c = 0; c < l.cols; ++c)
        sum += static_cast<double>(x[r * l.cols + c]) * std::polar(1.0, -two_pi * k * c / l.cols);
      rowspec[r * l.half + k] = sum;
    }
  for (int64_t k = 0; k < l.half; ++k)
    for (int64_t u = 0; u < l.rows; ++u) {
      cdouble sum = 0;
      for (int64_t r = 0; r < l.rows; ++r)
        sum += rowspec[r * l.half + k] * std::polar(1.0, -two_pi * u * r / l.rows);
      out[u * l.half + k] = sum;
    }
  return out;
}

class OwnFftTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    const Case c = GetParam();
    std::mt19937 rng(static_cast<unsigned>(c.rows * 1000 + c.cols * 10 + c.batch));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    real_.assign(c.batch * layout_.real_stride, 0.0f);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t i = 0; i < layout_.rows * layout_.cols; ++i)
        real_[b * layout_.real_stride + i] = dist(rng);
  }

  // FFTW's r2c (or c2r) of the whole batch with the same strides.
  std::vector<cfloat> fftw_forward() {
    const Case c = GetParam();
    std::vector<cfloat> out(c.batch * layout_.complex_stride);
    std::vector<float> in = real_;  // FFTW_ESTIMATE leaves inputs alone, but plans want non-const
    const int n[2] = {static_cast<int>(c.rows), static_cast<int>(c.cols)};
    fftwf_plan plan = fftwf_plan_many_dft_r2c(
        2, n, static_cast<int>(c.batch), in.data(), nullptr, 1,
        static_cast<int>(layout_.real_stride), reinterpret_cast<fftwf_complex*>(out.data()),
        nullptr, 1, static_cast<int>(layout_.complex_stride), FFTW_ESTIMATE);
    fftwf_execute(plan);
    fftwf_destroy_plan(plan);
    return out;
  }
  std::vector<float> fftw_inverse(std::vector<cfloat> spectrum) {
    const Case c = GetParam();
    std::vector<float> out(c.batch * layout_.real_stride, 0.0f);
    const int n[2] = {static_cast<int>(c.rows), static_cast<int>(c.cols)};
    fftwf_plan plan = fftwf_plan_many_dft_c2r(
        2, n, static_cast<int>(c.batch), reinterpret_cast<fftwf_complex*>(spectrum.data()), nullptr,
        1, static_cast<int>(layout_.complex_stride), out.data(), nullptr, 1,
        static_cast<int>(layout_.real_stride), FFTW_ESTIMATE);
    fftwf_execute(plan);
    fftwf_destroy_plan(plan);
    return out;
  }

  // max |a - b| / max |b| over the planes' bins (padding excluded).
  template <class A, class B>
  double spectrum_error(const A& a, const B& b, int64_t planes) const {
    double diff = 0, scale = 0;
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t i = 0; i < layout_.rows * layout_.half; ++i) {
        const int64_t j = p * layout_.complex_stride + i;
        const cdouble x(a[j].real(), a[j].imag()), y(b[j].real(), b[j].imag());
        diff = std::max(diff, std::abs(x - y));
        scale = std::max(scale, std::abs(y));
      }
    return diff / scale;
  }
  double real_error(const std::vector<float>& a, const std::vector<float>& b, double scale_a,
                    int64_t planes) const {
    double diff = 0, scale = 0;
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t i = 0; i < layout_.rows * layout_.cols; ++i) {
        const int64_t j = p * layout_.real_stride + i;
        diff = std::max(diff, std::abs(a[j] * scale_a - b[j]));
        scale = std::max(scale, std::abs(static_cast<double>(b[j])));
      }
    return diff / scale;
  }

  OwnFft2d fft(OwnFftIsa isa) const { return OwnFft2d(GetParam().rows, GetParam().cols, isa); }

  std::vector<cfloat> own_forward(OwnFftIsa isa) {
    const Case c = GetParam();
    // Padding is pre-filled so the test sees any write outside a plane's bins.
    std::vector<cfloat> out(c.batch * layout_.complex_stride, cfloat(7.0f, 7.0f));
    fft(isa).forward(real_.data(), {layout_.real_stride, 1}, out.data(), layout_.complex_stride,
                     c.batch);
    return out;
  }

  Layout layout_{GetParam().rows, GetParam().cols};
  std::vector<float> real_;
};

// Every test runs each instruction-set path this CPU supports (OwnFftIsa.h).
TEST_P(OwnFftTest, ForwardMatchesNaiveDft) {
  const Case c = GetParam();
  for (OwnFftIsa isa : supported_own_fft_isas()) {
    SCOPED_TRACE(to_string(isa));
    const std::vector<cfloat> own = own_forward(isa);
    // The first plane, and the last (in a partial group or a single plane when
    // batch % 8 != 0).
    for (int64_t p : {int64_t{0}, c.batch - 1}) {
      const std::vector<cdouble> ref =
          naive_forward(real_.data() + p * layout_.real_stride, layout_);
      std::vector<cdouble> padded(layout_.complex_stride);
      std::copy(ref.begin(), ref.end(), padded.begin());
      std::vector<cfloat> plane(own.begin() + p * layout_.complex_stride,
                                own.begin() + (p + 1) * layout_.complex_stride);
      EXPECT_LE(spectrum_error(plane, padded, 1), tolerance(c.rows, c.cols)) << "plane " << p;
    }
  }
}

TEST_P(OwnFftTest, ForwardMatchesFftwAndLeavesPaddingAlone) {
  const Case c = GetParam();
  const std::vector<cfloat> reference = fftw_forward();
  for (OwnFftIsa isa : supported_own_fft_isas()) {
    SCOPED_TRACE(to_string(isa));
    const std::vector<cfloat> own = own_forward(isa);
    EXPECT_LE(spectrum_error(own, reference, c.batch), tolerance(c.rows, c.cols));
    for (int64_t p = 0; p < c.batch; ++p)
      for (int64_t i = layout_.rows * layout_.half; i < layout_.complex_stride; ++i)
        ASSERT_EQ(own[p * layout_.complex_stride + i], cfloat(7.0f, 7.0f)) << "plane " << p;
  }
}

TEST_P(OwnFftTest, InverseMatchesFftw) {
  const Case c = GetParam();
  const std::vector<cfloat> spectrum = fftw_forward();  // Hermitian, as c2r requires
  const std::vector<float> reference = fftw_inverse(spectrum);
  for (OwnFftIsa isa : supported_own_fft_isas()) {
    SCOPED_TRACE(to_string(isa));
    std::vector<float> own(c.batch * layout_.real_stride, 0.0f);
    fft(isa).inverse(spectrum.data(), layout_.complex_stride, own.data(), {layout_.real_stride, 1},
                     c.batch);
    EXPECT_LE(real_error(own, reference, 1.0, c.batch), tolerance(c.rows, c.cols));
  }
}

TEST_P(OwnFftTest, InverseOfForwardIsIdentityTimesSize) {
  const Case c = GetParam();
  for (OwnFftIsa isa : supported_own_fft_isas()) {
    SCOPED_TRACE(to_string(isa));
    const std::vector<cfloat> spectrum = own_forward(isa);
    std::vector<float> back(c.batch * layout_.real_stride, 0.0f);
    fft(isa).inverse(spectrum.data(), layout_.complex_stride, back.data(), {layout_.real_stride, 1},
                     c.batch);
    EXPECT_LE(real_error(back, real_, 1.0 / static_cast<double>(c.rows * c.cols), c.batch),
              tolerance(c.rows, c.cols));
  }
}

TEST_P(OwnFftTest, OneAndThreeThreadsAreIdentical) {
  const Case c = GetParam();
  const OwnFft2d fft_default(c.rows, c.cols);
  ThreadPool one(1), three(3);
  std::vector<cfloat> s1(c.batch * layout_.complex_stride, cfloat(7.0f, 7.0f)), s3 = s1;
  fft_default.forward(one, real_.data(), {layout_.real_stride, 1}, s1.data(),
                      layout_.complex_stride, c.batch);
  fft_default.forward(three, real_.data(), {layout_.real_stride, 1}, s3.data(),
                      layout_.complex_stride, c.batch);
  EXPECT_EQ(s1, s3);
  std::vector<float> r1(c.batch * layout_.real_stride, 0.0f), r3 = r1;
  fft_default.inverse(one, s1.data(), layout_.complex_stride, r1.data(), {layout_.real_stride, 1},
                      c.batch);
  fft_default.inverse(three, s1.data(), layout_.complex_stride, r3.data(), {layout_.real_stride, 1},
                      c.batch);
  EXPECT_EQ(r1, r3);
  // The serial entry point gives the same bits as the pooled one.
  EXPECT_EQ(own_forward(fft_default.isa()), s1);
}

INSTANTIATE_TEST_SUITE_P(Sizes, OwnFftTest, ::testing::ValuesIn(all_cases()), case_name);

// Strided real planes: element (r, c) of plane i at i * plane + (r * cols + c) * element.
struct StridedCase {
  int64_t rows, cols, element, plane, count;
};

std::string strided_name(const ::testing::TestParamInfo<StridedCase>& info) {
  const StridedCase& c = info.param;
  return std::to_string(c.rows) + "x" + std::to_string(c.cols) + "_element" +
         std::to_string(c.element) + (c.plane == 1 ? "_interleaved" : "_blocked") + "_count" +
         std::to_string(c.count);
}

// Every size above with: 16 interleaved planes of stride 16 (NHWC with C = 16: two
// vector groups read with plain loads), 12 and 10 of them (a group plus a partial group,
// or plus two single planes; the planes after them must stay untouched), 3 interleaved of
// stride 3 (C = 3, one partial group), and 11 and 9 blocked planes of element stride 3
// (the gathering path; a partial group, or one single plane).
std::vector<StridedCase> strided_cases() {
  std::vector<StridedCase> cases;
  for (auto [r, c] : all_shapes()) {
    cases.push_back({r, c, 16, 1, 16});
    cases.push_back({r, c, 16, 1, 12});
    cases.push_back({r, c, 16, 1, 10});
    cases.push_back({r, c, 3, 1, 3});
    cases.push_back({r, c, 3, 3 * r * c + 5, 11});
    cases.push_back({r, c, 3, 3 * r * c + 5, 9});
  }
  return cases;
}

class OwnFftStridedTest : public ::testing::TestWithParam<StridedCase> {
 protected:
  void SetUp() override {
    const StridedCase& c = GetParam();
    std::mt19937 rng(static_cast<unsigned>(c.rows * 1000 + c.cols * 10 + c.element));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    // Elements no plane of the call addresses hold 7, so stray reads show as errors and
    // stray writes as changed values.
    real_.assign(static_cast<size_t>(span()), 7.0f);
    for (int64_t p = 0; p < c.count; ++p)
      for (int64_t i = 0; i < c.rows * c.cols; ++i) real_[at(p, i)] = dist(rng);
  }

  int64_t span() const {
    const StridedCase& c = GetParam();
    // Interleaved: room for element-stride planes, so a partial count leaves some unused.
    const int64_t planes = c.plane == 1 ? c.element : c.count;
    return (planes - 1) * c.plane + (c.rows * c.cols - 1) * c.element + 1;
  }
  int64_t at(int64_t plane, int64_t i) const {
    return plane * GetParam().plane + i * GetParam().element;
  }
  FftShape shape() const {
    const StridedCase& c = GetParam();
    FftShape s;
    s.rows = c.rows, s.cols = c.cols, s.real_stride = c.plane, s.real_element_stride = c.element;
    s.complex_stride = c.rows * (c.cols / 2 + 1) + 8;
    return s;
  }
  std::vector<float> plane_of(const std::vector<float>& real, int64_t p) const {
    std::vector<float> out(static_cast<size_t>(GetParam().rows * GetParam().cols));
    for (size_t i = 0; i < out.size(); ++i) out[i] = real[at(p, static_cast<int64_t>(i))];
    return out;
  }

  // max |a - b| / max |b| over the first bins() bins of each plane.
  double spectrum_error(const std::vector<cfloat>& a, const std::vector<cfloat>& b) const {
    const FftShape s = shape();
    double diff = 0, scale = 0;
    for (int64_t p = 0; p < GetParam().count; ++p)
      for (int64_t i = 0; i < s.bins(); ++i) {
        const int64_t j = p * s.complex_stride + i;
        diff = std::max(diff, static_cast<double>(std::abs(a[j] - b[j])));
        scale = std::max(scale, static_cast<double>(std::abs(b[j])));
      }
    return diff / scale;
  }
  // max |a * scale_a - b| / max |b| over the addressed elements; elements no plane
  // addresses must be equal in a and b.
  double real_error(const std::vector<float>& a, const std::vector<float>& b,
                    double scale_a) const {
    std::vector<bool> addressed(a.size(), false);
    double diff = 0, scale = 0;
    for (int64_t p = 0; p < GetParam().count; ++p)
      for (int64_t i = 0; i < GetParam().rows * GetParam().cols; ++i) {
        const int64_t j = at(p, i);
        addressed[j] = true;
        diff = std::max(diff, std::abs(a[j] * scale_a - b[j]));
        scale = std::max(scale, std::abs(static_cast<double>(b[j])));
      }
    for (size_t j = 0; j < a.size(); ++j)
      if (!addressed[j]) {
        EXPECT_EQ(a[j], b[j]) << "element " << j << " outside every plane";
      }
    return diff / scale;
  }

  std::vector<cfloat> fftw_forward() {
    std::vector<cfloat> out(static_cast<size_t>(GetParam().count * shape().complex_stride));
    FftwTransformFactory().make(shape())->forward(real_.data(), out.data(), GetParam().count);
    return out;
  }

  std::vector<float> real_;
};

TEST_P(OwnFftStridedTest, ForwardMatchesFftwWithTheSameStridesAndTheNaiveDft) {
  const StridedCase& c = GetParam();
  const FftShape s = shape();
  const std::vector<cfloat> reference = fftw_forward();
  for (OwnFftIsa isa : supported_own_fft_isas()) {
    SCOPED_TRACE(to_string(isa));
    std::vector<cfloat> own(reference.size(), cfloat(7.0f, 7.0f));
    OwnFft2d(c.rows, c.cols, isa)
        .forward(real_.data(), {c.plane, c.element}, own.data(), s.complex_stride, c.count);
    EXPECT_LE(spectrum_error(own, reference), tolerance(c.rows, c.cols));
    // The naive DFT of the first and the last plane, gathered to a contiguous one.
    const Layout contiguous(c.rows, c.cols);
    for (int64_t p : {int64_t{0}, c.count - 1}) {
      const std::vector<cdouble> ref = naive_forward(plane_of(real_, p).data(), contiguous);
      double diff = 0, scale = 0;
      for (int64_t i = 0; i < s.bins(); ++i) {
        const cfloat o = own[p * s.complex_stride + i];
        diff = std::max(diff, std::abs(cdouble(o.real(), o.imag()) - ref[i]));
        scale = std::max(scale, std::abs(ref[i]));
      }
      EXPECT_LE(diff / scale, tolerance(c.rows, c.cols)) << "plane " << p;
    }
  }
  // The FftTransform of fft-own passes the shape's strides through.
  std::vector<cfloat> own(reference.size());
  OwnFftTransformFactory().make(s)->forward(real_.data(), own.data(), c.count);
  EXPECT_LE(spectrum_error(own, reference), tolerance(c.rows, c.cols));
}

TEST_P(OwnFftStridedTest, InverseMatchesFftwAndForwardInverseIsIdentity) {
  const StridedCase& c = GetParam();
  const FftShape s = shape();
  const std::vector<cfloat> spectrum = fftw_forward();
  std::vector<float> reference(real_.size(), 7.0f);
  std::vector<cfloat> scratch = spectrum;  // FFTW's c2r may overwrite its input
  FftwTransformFactory().make(s)->inverse(scratch.data(), reference.data(), c.count);
  for (OwnFftIsa isa : supported_own_fft_isas()) {
    SCOPED_TRACE(to_string(isa));
    const OwnFft2d fft(c.rows, c.cols, isa);
    std::vector<float> own(real_.size(), 7.0f);
    fft.inverse(spectrum.data(), s.complex_stride, own.data(), {c.plane, c.element}, c.count);
    EXPECT_LE(real_error(own, reference, 1.0), tolerance(c.rows, c.cols));
    std::vector<cfloat> forward(spectrum.size());
    fft.forward(real_.data(), {c.plane, c.element}, forward.data(), s.complex_stride, c.count);
    std::vector<float> back(real_.size(), 7.0f);
    fft.inverse(forward.data(), s.complex_stride, back.data(), {c.plane, c.element}, c.count);
    EXPECT_LE(real_error(back, real_, 1.0 / static_cast<double>(c.rows * c.cols)),
              tolerance(c.rows, c.cols));
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, OwnFftStridedTest, ::testing::ValuesIn(strided_cases()),
                         strided_name);

// Uniform noise in [-1, 1) over everything `count` planes of `points` elements in
// `layout` span, from their first element to their last (gaps included).
std::vector<float> noise_planes(int64_t points, OwnFftRealLayout layout, int64_t count,
                                unsigned seed) {
  const int64_t span = (count - 1) * layout.plane + (points - 1) * layout.element + 1;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> real(static_cast<size_t>(span));
  std::generate(real.begin(), real.end(), [&] { return dist(rng); });
  return real;
}

// The split within each 2-D transform against the split over the batch: the same bits,
// on 2 and 3 threads, for one plane, a few single planes, a vector group plus single
// planes and two groups, contiguous and interleaved, on every path this CPU runs.
TEST(OwnFftSplit, WithinTransformGivesTheBitsOfTheBatchSplit) {
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
           {128, 128}, {64, 64}, {36, 36}, {8, 8}, {48, 80}, {1, 8}, {6, 10}, {10, 10}, {20, 12}}) {
    for (int64_t count : {1, 3, 9, 16}) {
      for (int64_t element : {1, 16}) {
        // Interleaved planes (element 16, plane 1) or padded blocks (element 1).
        const OwnFftRealLayout layout{element == 1 ? rows * cols + 16 : 1, element};
        const int64_t cs = rows * (cols / 2 + 1) + 8;
        const std::vector<float> real =
            noise_planes(rows * cols, layout, count, static_cast<unsigned>(rows + cols + count));
        for (OwnFftIsa isa : supported_own_fft_isas()) {
          SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " count " +
                       std::to_string(count) + " element " + std::to_string(element) + " " +
                       to_string(isa));
          const OwnFft2d fft(rows, cols, isa);
          for (int threads : {2, 3}) {
            ThreadPool pool(threads);
            std::vector<cfloat> batch(static_cast<size_t>(count * cs), cfloat(7.0f, 7.0f));
            std::vector<cfloat> within = batch;
            fft.forward(pool, real.data(), layout, batch.data(), cs, count, OwnFftSplit::batch);
            fft.forward(pool, real.data(), layout, within.data(), cs, count, OwnFftSplit::within);
            ASSERT_EQ(within, batch);
            std::vector<float> back_batch(real.size(), 7.0f), back_within = back_batch;
            fft.inverse(pool, batch.data(), cs, back_batch.data(), layout, count,
                        OwnFftSplit::batch);
            fft.inverse(pool, batch.data(), cs, back_within.data(), layout, count,
                        OwnFftSplit::within);
            ASSERT_EQ(back_within, back_batch);
          }
        }
      }
    }
  }
}

TEST(OwnFftSplit, AutomaticSplitsWithinOnlyLargeTransformsOfFewGroups) {
  const OwnFft2d large(128, 128), small(64, 64);
  EXPECT_EQ(large.split_for(2, 1), OwnFftSplit::within);
  EXPECT_EQ(large.split_for(4, 24), OwnFftSplit::within);  // 3 groups < 4 threads
  EXPECT_EQ(large.split_for(2, 16), OwnFftSplit::batch);   // 2 groups: one per thread
  EXPECT_EQ(large.split_for(1, 1), OwnFftSplit::batch);
  EXPECT_EQ(small.split_for(2, 1), OwnFftSplit::batch);
}

// Streamed output (staged per group, then non-temporal whole-line stores) against
// plain stores: the same bits, and padding between planes and spectra left alone, for
// full groups with leftovers, back-to-back and padded planes (plane strides that are
// and are not a multiple of 16 bytes, so the copies start and end mid-line), interleaved
// NHWC-like planes (streamed forward, cached inverse), sizes with and without a
// streamed path (32x32 and 64x64 groups are written cached), on every path and pooled.
TEST(OwnFftStore, StreamedWritesTheBitsOfCached) {
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
           {8, 8}, {10, 10}, {12, 12}, {20, 20}, {32, 32}, {12, 20}, {64, 64}, {1, 8}}) {
    const int64_t points = rows * cols, bins = rows * (cols / 2 + 1);
    for (int64_t count : {8, 21, 40}) {
      // Interleaved: the call's planes are the channels of one NHWC image (element count).
      for (auto [plane_pad, element, spectrum_pad] :
           std::vector<std::tuple<int64_t, int64_t, int64_t>>{
               {0, 1, 0}, {4, 1, 2}, {3, 1, 1}, {0, count, 0}}) {
        const OwnFftRealLayout layout{element == 1 ? points + plane_pad : 1, element};
        const int64_t cs = bins + spectrum_pad;
        const std::vector<float> real =
            noise_planes(points, layout, count, static_cast<unsigned>(points + count + plane_pad));
        for (OwnFftIsa isa : supported_own_fft_isas()) {
          SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " count " +
                       std::to_string(count) + " plane pad " + std::to_string(plane_pad) +
                       " element " + std::to_string(element) + " " + to_string(isa));
          const OwnFft2d fft(rows, cols, isa);
          std::vector<cfloat> cached(static_cast<size_t>(count * cs), cfloat(7.0f, 7.0f));
          std::vector<cfloat> streamed = cached;
          fft.forward(real.data(), layout, cached.data(), cs, count, OwnFftStore::cached);
          fft.forward(real.data(), layout, streamed.data(), cs, count, OwnFftStore::streamed);
          ASSERT_EQ(streamed, cached);
          std::vector<float> back_cached(real.size(), 7.0f), back_streamed = back_cached;
          fft.inverse(cached.data(), cs, back_cached.data(), layout, count, OwnFftStore::cached);
          fft.inverse(cached.data(), cs, back_streamed.data(), layout, count,
                      OwnFftStore::streamed);
          ASSERT_EQ(back_streamed, back_cached);
          ThreadPool pool(2);
          std::vector<cfloat> pooled(cached.size(), cfloat(7.0f, 7.0f));
          fft.forward(pool, real.data(), layout, pooled.data(), cs, count, OwnFftSplit::batch,
                      OwnFftStore::streamed);
          ASSERT_EQ(pooled, cached);
          std::vector<float> back_pooled(real.size(), 7.0f);
          fft.inverse(pool, cached.data(), cs, back_pooled.data(), layout, count,
                      OwnFftSplit::batch, OwnFftStore::streamed);
          ASSERT_EQ(back_pooled, back_cached);
        }
      }
    }
  }
}

// automatic streams a call once its real planes and spectra together exceed a third of
// the last-level cache, counted over the whole call.
TEST(OwnFftStore, AutomaticStreamsOnlyCallsThatOutgrowAThirdOfTheCache) {
  const int64_t limit = OwnFft2d::stream_min_bytes();
  std::ifstream sysfs("/sys/devices/system/cpu/cpu0/cache/index3/size");
  int64_t kib = 0;
  if (sysfs >> kib)
    EXPECT_EQ(limit, (kib << 10) / 3);
  else
    EXPECT_EQ(limit, (int64_t{32} << 20) / 3);
  const OwnFft2d fft(12, 12);
  const int64_t per_plane = 12 * 12 * 4 + fft.bins() * 8;
  const int64_t fits = limit / per_plane;
  EXPECT_EQ(fft.store_for(fits), OwnFftStore::cached);
  EXPECT_EQ(fft.store_for(fits + 1), OwnFftStore::streamed);
  EXPECT_EQ(fft.store_for(8), OwnFftStore::cached);
}

TEST(OwnFftIsaChoice, DetectsThisCpuAndHonoursTheEnvironment) {
  const std::vector<OwnFftIsa> supported = supported_own_fft_isas();
  ASSERT_FALSE(supported.empty());
  EXPECT_EQ(supported.front(), OwnFftIsa::scalar);
  // The paths the compiler was told this build machine has are there at run time.
#if defined(__AVX2__) && defined(__FMA__)
  EXPECT_TRUE(cpu_supports(OwnFftIsa::avx2));
#endif
#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512BW__) && defined(__AVX512DQ__)
  EXPECT_TRUE(cpu_supports(OwnFftIsa::avx512));
#endif
  const char* saved = std::getenv("TUNESCOPE_FFT_ISA");
  const std::string restore = saved ? saved : "";
  unsetenv("TUNESCOPE_FFT_ISA");
  EXPECT_EQ(default_own_fft_isa(), supported.back());
  for (OwnFftIsa isa : supported) {
    setenv("TUNESCOPE_FFT_ISA", to_string(isa), 1);
    EXPECT_EQ(default_own_fft_isa(), isa);
    EXPECT_EQ(OwnFft2d(8, 8).isa(), isa);
  }
  setenv("TUNESCOPE_FFT_ISA", "sse9", 1);
  try {
    default_own_fft_isa();
    ADD_FAILURE() << "an unknown path was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("TUNESCOPE_FFT_ISA: unknown path 'sse9'"),
              std::string::npos)
        << e.what();
  }
  if (restore.empty())
    unsetenv("TUNESCOPE_FFT_ISA");
  else
    setenv("TUNESCOPE_FFT_ISA", restore.c_str(), 1);
}

TEST(OwnFftSizes, RefusesOddAndOtherPrimeFactors) {
  for (int64_t n : std::vector<int64_t>{0, 3, 7, 9, 14, 15, 22, 45, 2 * OwnFft2d::kMaxSize}) {
    EXPECT_FALSE(OwnFft2d::supports(n)) << n;
    EXPECT_THROW(OwnFft2d(n, 8), Error) << n;
    EXPECT_THROW(OwnFft2d(8, n), Error) << n;
  }
}

TEST(OwnFftSizes, AcceptsEvenProductsOf2And3And5) {
  for (int64_t n : std::vector<int64_t>{1, 2, 6, 10, 18, 30, 36, 50, 90, 250, 4096})
    EXPECT_TRUE(OwnFft2d::supports(n)) << n;
}

TEST(OwnFftSizes, TransformPicksTheNextSupportedSize) {
  const OwnFftTransformFactory factory;
  // The padded sizes of the model layers: 32 + 2 -> 36 (was 64), 16 + 2 -> 18, 42 -> 48.
  const std::vector<std::pair<int64_t, int64_t>> expected = {
      {1, 1},   {3, 4},   {5, 6},   {7, 8},   {8, 8},   {11, 12},   {14, 16},  {17, 18},
      {18, 18}, {33, 36}, {34, 36}, {42, 48}, {44, 48}, {100, 100}, {101, 108}};
  for (auto [n, good] : expected) EXPECT_EQ(factory.good_size(n), good) << n;
  // Beyond the largest size it transforms, the length is returned for make() to refuse.
  EXPECT_EQ(factory.good_size(OwnFft2d::kMaxSize + 1), OwnFft2d::kMaxSize + 1);
}

}  // namespace
}  // namespace tunescope::cpu
