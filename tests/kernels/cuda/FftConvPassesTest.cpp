// The pass sequences of the cuda fft-cufft / fft-own convolutions (FftConvPasses.h) run
// on the host: the same windows, operands, leading dimensions, strides and chunking as on
// the device, with host steps — the plane kernels' index math (FftPlaneIndex.h), the
// emulated own FFT kernel (CudaFftSchedule.h) and a reference of cublasCgemmStridedBatched
// (column-major, op = none or conjugate transpose, beta = 0 never reads C) — against the
// CPU `direct` algorithm on the lenet5 / resnet18-small layers of the device tests, NCHW
// and NHWC, in one chunk and in one-image chunks, with and without the spectra forward
// keeps for the backward passes (fft_workspace=cache). Needs no GPU.
//
// Stated error bound, max |fft - direct| / max |direct|: 1e-3, the CPU fft-* algorithms'
// (ConvAlgorithmsMatchDirectTest): float transforms and per-bin sums over the channels.
#include "kernels/cuda/FftConvPasses.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>
#include <vector>

#include "CudaConvTestSupport.h"
#include "kernels/cuda/OwnFftCudaTransform.h"
#include "tests/kernels/cpu/ConvTestSupport.h"

namespace tunescope::cuda {
namespace {

using conv_test::NamedProblem;
using fft::Cf;

constexpr double kPassTolerance = 1e-3;

// What cublasCgemmStridedBatched computes, element by element in double.
void reference_strided_batched_cgemm(const ChannelProduct& p, const Cf* a, const Cf* b, Cf* c) {
  auto element = [](const Cf* m, int64_t ld, bool conj_transpose, int64_t row, int64_t col) {
    // op(M)(row, col): M(row, col) = m[row + col * ld], or conj(M(col, row)).
    const Cf v = conj_transpose ? m[col + row * ld] : m[row + col * ld];
    return std::complex<double>(v.re, conj_transpose ? -v.im : v.im);
  };
  for (int64_t f = 0; f < p.bins; ++f)
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t i = 0; i < p.m; ++i) {
        std::complex<double> sum = 0;
        for (int64_t l = 0; l < p.k; ++l)
          sum += element(a + f * p.stride_a, p.lda, p.conj_transpose_a, i, l) *
                 element(b + f * p.stride_b, p.ldb, p.conj_transpose_b, l, j);
        Cf& out = c[f * p.stride_c + i + j * p.ldc];
        if (p.beta != 0.0f)
          sum += static_cast<double>(p.beta) * std::complex<double>(out.re, out.im);
        out = Cf{static_cast<float>(sum.real()), static_cast<float>(sum.imag())};
      }
}

class HostSteps final : public FftConvSteps {
 public:
  HostSteps(int64_t rows, int64_t cols)
      : geometry_(static_cast<int>(rows), static_cast<int>(cols)),
        group_(fft::planes_per_block(geometry_, 48 << 10)) {}

  void pack(const Tensor& t, const PlaneWindow& window, float* real) override {
    const StridedTensorView view = tensor_view(t);
    for (int64_t i = 0; i < window.plane_elements(); ++i) real[i] = packed_value(view, window, i);
  }
  void r2c(const float* real, Cf* spectrum, int64_t count) override {
    ++r2c_calls;
    ASSERT_TRUE(
        fft::emulate_transform(geometry_, -1, count, group_, real, nullptr, nullptr, spectrum));
  }
  void c2r(Cf* spectrum, float* real, int64_t count) override {
    ASSERT_TRUE(
        fft::emulate_transform(geometry_, 1, count, group_, nullptr, real, spectrum, nullptr));
  }
  void product(const ChannelProduct& p, const Cf* a, const Cf* b, Cf* c) override {
    reference_strided_batched_cgemm(p, a, b, c);
  }
  void unpack(const float* real, const PlaneWindow& window, float scale, Tensor& t) override {
    const StridedTensorView view = tensor_view(t);
    for (int64_t i = 0; i < tensor_elements(view, window); ++i)
      unpack_element(real, window, scale, view, i);
  }

  int r2c_calls = 0;

 private:
  fft::Fft2dGeometry geometry_;
  int group_;
};

// The workspace of one problem in host memory, NaN-filled so a step that reads what no
// earlier step wrote fails the comparison.
struct HostFrame {
  std::vector<Cf> a, b, filter;
  std::vector<float> real;
  FftConvFrame frame;

  // Poisons the spectra, so a pass that relies on what an earlier pass left in the
  // workspace fails.
  void poison() {
    for (std::vector<Cf>* v : {&a, &b, &filter}) std::fill(v->begin(), v->end(), Cf{NAN, NAN});
  }

  HostFrame(const ConvProblem& p, int64_t chunk) {
    const OwnFftCudaTransformFactory own;
    frame.rows = own.good_size(p.input.h + 2 * p.pad_h);
    frame.cols = own.good_size(p.input.w + 2 * p.pad_w);
    frame.chunk = chunk;
    const int64_t C = p.input.c, K = p.out_channels, planes = std::max(C, K);
    const Cf nan = {NAN, NAN};
    a.assign(static_cast<size_t>(chunk * planes * frame.bins()), nan);
    b.assign(a.size(), nan);
    filter.assign(static_cast<size_t>(K * C * frame.bins()), nan);
    real.assign(static_cast<size_t>(std::max(chunk * planes, K * C) * frame.rows * frame.cols),
                NAN);
    frame.spec_a = a.data(), frame.spec_b = b.data(), frame.spec_filter = filter.data(),
    frame.real = real.data();
  }
};

using Param = std::tuple<NamedProblem, Layout, bool>;  // problem, layout, one-image chunks

class FftConvPassesOnHost : public ::testing::TestWithParam<Param> {};

TEST_P(FftConvPassesOnHost, MatchDirect) {
  const auto& [named, layout, single_image_chunks] = GetParam();
  const ConvProblem p = conv_test::with_layout(named.problem, layout);
  const conv_test_cuda::Reference& ref = conv_test_cuda::reference_for(p);
  const int64_t chunk = single_image_chunks ? 1 : p.input.n;
  HostFrame frame(p, chunk);
  HostSteps steps(frame.frame.rows, frame.frame.cols);

  Tensor y(p.output(), p.layout), dx(p.input, p.layout), dw(p.filter(), p.layout);
  for (Tensor* t : {&y, &dx, &dw}) t->fill(NAN);
  fft_conv_forward(p, frame.frame, steps, ref.host.x, ref.host.w, y);
  fft_conv_backward_data(p, frame.frame, steps, ref.host.dy, ref.host.w, dx);
  fft_conv_backward_filter(p, frame.frame, steps, ref.host.x, ref.host.dy, dw);
  EXPECT_LE(conv_test::relative_error(y, ref.y), kPassTolerance) << "forward";
  EXPECT_LE(conv_test::relative_error(dx, ref.dx), kPassTolerance) << "backward data";
  EXPECT_LE(conv_test::relative_error(dw, ref.dw), kPassTolerance) << "backward filter";
}

INSTANTIATE_TEST_SUITE_P(ModelLayers, FftConvPassesOnHost,
                         ::testing::Combine(::testing::ValuesIn(conv_test_cuda::model_layers()),
                                            ::testing::Values(Layout::NCHW, Layout::NHWC),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           std::string name =
                               std::get<0>(info.param).name + "_" +
                               to_string(std::get<1>(info.param)) +
                               (std::get<2>(info.param) ? "_chunks_of_1" : "_one_chunk");
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// The fft_workspace=cache policy: forward keeps x's and w's spectra, the backward passes
// skip those transforms and still match direct.
TEST_P(FftConvPassesOnHost, SavedSpectraSkipTransformsAndMatchDirect) {
  const auto& [named, layout, single_image_chunks] = GetParam();
  const ConvProblem p = conv_test::with_layout(named.problem, layout);
  const conv_test_cuda::Reference& ref = conv_test_cuda::reference_for(p);
  const int64_t chunk = single_image_chunks ? 1 : p.input.n,
                chunks = (p.input.n + chunk - 1) / chunk;
  HostFrame frame(p, chunk);
  HostSteps steps(frame.frame.rows, frame.frame.cols);
  const int64_t C = p.input.c, K = p.out_channels;
  std::vector<Cf> saved_x(static_cast<size_t>(p.input.n * C * frame.frame.bins()), Cf{NAN, NAN});
  std::vector<Cf> saved_w(static_cast<size_t>(K * C * frame.frame.bins()), Cf{NAN, NAN});
  FftConvSaved saved{saved_x.data(), saved_w.data()};

  Tensor y(p.output(), p.layout), dx(p.input, p.layout), dw(p.filter(), p.layout);
  for (Tensor* t : {&y, &dx, &dw}) t->fill(NAN);
  fft_conv_forward(p, frame.frame, steps, ref.host.x, ref.host.w, y, saved);
  EXPECT_EQ(steps.r2c_calls, 1 + chunks);  // w, then x chunk by chunk
  saved.reuse_x = saved.reuse_w = true;
  frame.poison();
  fft_conv_backward_data(p, frame.frame, steps, ref.host.dy, ref.host.w, dx, saved);
  EXPECT_EQ(steps.r2c_calls, 1 + 2 * chunks) << "backward data transforms only dy";
  frame.poison();
  fft_conv_backward_filter(p, frame.frame, steps, ref.host.x, ref.host.dy, dw, saved);
  EXPECT_EQ(steps.r2c_calls, 1 + 3 * chunks) << "backward filter transforms only dy";
  EXPECT_LE(conv_test::relative_error(y, ref.y), kPassTolerance) << "forward";
  EXPECT_LE(conv_test::relative_error(dx, ref.dx), kPassTolerance) << "backward data";
  EXPECT_LE(conv_test::relative_error(dw, ref.dw), kPassTolerance) << "backward filter";
}

// The reference product against a hand-worked case, so the comparison above rests on it.
TEST(ReferenceStridedBatchedCgemm, ConjugateTransposeAndBeta) {
  // One bin; A is 2 x 1 (column-major, ld 2), op_a = ^H gives 1 x 2; B is 2 x 1.
  const Cf a[2] = {{1, 2}, {3, -1}}, b[2] = {{0, 1}, {2, 2}};
  Cf c[1] = {{10, 0}};
  reference_strided_batched_cgemm({true, false, 1, 1, 2, 2, 2, 1, 0, 0, 0, 1, 1.0f}, a, b, c);
  // conj(1+2i)(i) + conj(3-i)(2+2i) + 10 = (2+i) + (4+8i) + 10 = 16 + 9i
  EXPECT_FLOAT_EQ(c[0].re, 16.0f);
  EXPECT_FLOAT_EQ(c[0].im, 9.0f);
}

}  // namespace
}  // namespace tunescope::cuda
