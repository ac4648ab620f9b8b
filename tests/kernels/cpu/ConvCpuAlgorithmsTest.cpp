// The cpu convolution algorithms beyond the backend-wide match with direct
// (tests/kernels/backends): the same logical problem gives the same values in NCHW and
// NHWC, fft-fftw's chunked batch, and FFTW's good transform sizes.
#include <gtest/gtest.h>

#include <memory>

#include "ConvTestSupport.h"
#include "core/base/Registry.h"
#include "kernels/cpu/FftConvolution.h"
#include "kernels/cpu/FftwTransform.h"

namespace tunescope::conv_test {
namespace {

// The same logical problem in NCHW and NHWC gives the same logical values (within the
// algorithm's tolerance, since tiling and summation order differ between layouts).
class LayoutsAgree : public ::testing::TestWithParam<std::tuple<std::string, NamedProblem>> {};

TEST_P(LayoutsAgree, AllPasses) {
  const auto& [algorithm, named] = GetParam();
  const ConvProblem nchw = with_layout(named.problem, Layout::NCHW);
  const ConvProblem nhwc = with_layout(named.problem, Layout::NHWC);
  auto algo = make_algorithm(algorithm);
  if (!algo->supports(nchw) || !algo->supports(nhwc))
    GTEST_SKIP() << algorithm << " does not support " << nchw.key() << ": "
                 << algo->unsupported_reason(nchw) << algo->unsupported_reason(nhwc);
  ThreadPool pool(2);
  const ConvOperands a = random_operands(nchw, 41);
  const ConvOperands b{to_layout(a.x, Layout::NHWC), to_layout(a.w, Layout::NHWC),
                       to_layout(a.dy, Layout::NHWC)};
  const double tolerance = tolerance_for(algorithm);
  EXPECT_LE(relative_error(run_forward(*algo, nhwc, pool, b.x, b.w),
                           run_forward(*algo, nchw, pool, a.x, a.w)),
            tolerance);
  EXPECT_LE(relative_error(run_backward_data(*algo, nhwc, pool, b.dy, b.w),
                           run_backward_data(*algo, nchw, pool, a.dy, a.w)),
            tolerance);
  EXPECT_LE(relative_error(run_backward_filter(*algo, nhwc, pool, b.x, b.dy),
                           run_backward_filter(*algo, nchw, pool, a.x, a.dy)),
            tolerance);
}

INSTANTIATE_TEST_SUITE_P(
    AllCpuAlgorithms, LayoutsAgree,
    ::testing::Combine(
        ::testing::ValuesIn(cpu_algorithms()),
        ::testing::Values(NamedProblem{"3x3_stride2_pad1",
                                       make_problem(2, 5, 9, 10, 6, 3, 3, 2, 2, 1, 1)},
                          NamedProblem{"5x5", make_problem(3, 2, 12, 12, 5, 5, 5, 1, 1, 0, 0)})),
    [](const auto& info) {
      std::string algo = std::get<0>(info.param);
      for (char& ch : algo)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return algo + "_" + std::get<1>(info.param).name;
    });

// FFT convolution split into chunks of images (a tiny budget forces one image per
// chunk): backward filter must accumulate its spectra across chunks.
TEST(FftConvolutionChunks, OneImagePerChunkMatchesDirect) {
  cpu::FftConvolution fft("fft-fftw", TUNESCOPE_FFT_KERNEL_NAMES("fft-fftw"),
                          std::make_unique<cpu::FftwTransformFactory>(), 1);
  auto direct = Registry::instance().make_conv_algorithm("cpu", "direct");
  ThreadPool pool(3);
  for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
    const ConvProblem p = with_layout(make_problem(4, 3, 9, 10, 5, 3, 3, 2, 2, 1, 1), layout);
    const ConvOperands ops = random_operands(p, 51);
    EXPECT_LE(relative_error(run_forward(fft, p, pool, ops.x, ops.w),
                             run_forward(*direct, p, pool, ops.x, ops.w)),
              1e-3);
    EXPECT_LE(relative_error(run_backward_data(fft, p, pool, ops.dy, ops.w),
                             run_backward_data(*direct, p, pool, ops.dy, ops.w)),
              1e-3);
    EXPECT_LE(relative_error(run_backward_filter(fft, p, pool, ops.x, ops.dy),
                             run_backward_filter(*direct, p, pool, ops.x, ops.dy)),
              1e-3);
  }
}

TEST(FftwTransformFactory, GoodSizesAreProductsOfSmallPrimes) {
  cpu::FftwTransformFactory factory;
  EXPECT_EQ(factory.good_size(32), 32);
  EXPECT_EQ(factory.good_size(34), 35);
  EXPECT_EQ(factory.good_size(11), 12);
  EXPECT_EQ(factory.good_size(1), 1);
  EXPECT_EQ(factory.good_size(121), 125);
}

}  // namespace
}  // namespace tunescope::conv_test
