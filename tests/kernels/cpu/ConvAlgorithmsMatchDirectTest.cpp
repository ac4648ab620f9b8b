// Every registered "cpu" convolution algorithm against `direct` (differential test):
// forward, backward data and backward filter, both layouts, pools of 1 and 3 threads;
// and every algorithm gives the same logical values in NCHW and NHWC. fft-fftw and
// fft-own run once more as "<algorithm>@8", made with fft_tile 8 (its knob) as a
// config would make them: strided problems fall back to untiled, every other one runs
// in tiles of 8x8 transforms.
#include <gtest/gtest.h>

#include <memory>

#include "ConvTestSupport.h"
#include "core/base/Registry.h"
#include "kernels/cpu/FftConvolution.h"
#include "kernels/cpu/FftwTransform.h"

namespace tunescope::conv_test {
namespace {

std::vector<NamedProblem> match_cases() {
  return {
      {"lenet_conv1_like", make_problem(3, 1, 12, 12, 6, 5, 5, 1, 1, 0, 0)},
      {"odd_3x3_pad1", make_problem(3, 5, 9, 11, 7, 3, 3, 1, 1, 1, 1)},
      {"3x3_stride2_pad1", make_problem(2, 6, 10, 9, 5, 3, 3, 2, 2, 1, 1)},
      {"1x1_stride2", make_problem(3, 8, 8, 8, 12, 1, 1, 2, 2, 0, 0)},
      {"1x1", make_problem(2, 4, 7, 7, 3, 1, 1, 1, 1, 0, 0)},
      {"7x7_pad2", make_problem(1, 3, 11, 13, 4, 7, 7, 1, 1, 2, 2)},
      {"3x5_stride2x1_pad1x2", make_problem(2, 3, 9, 8, 5, 3, 5, 2, 1, 1, 2)},
      {"5x5_stride3", make_problem(3, 2, 14, 13, 3, 5, 5, 3, 3, 1, 1)},
      // Large enough for several gemm waves and backward-filter partials.
      {"resnet_stage_like", make_problem(24, 16, 32, 32, 16, 3, 3, 1, 1, 1, 1)},
  };
}

using MatchParam = std::tuple<std::string, NamedProblem, Layout, int>;

std::vector<std::string> cpu_algorithms() {
  std::vector<std::string> names = Registry::instance().conv_algorithms("cpu");
  names.push_back("fft-fftw@8");
  names.push_back("fft-own@8");
  return names;
}

// A name of cpu_algorithms(): a registered algorithm, or "<name>@<fft_tile>".
std::unique_ptr<ConvAlgorithm> make_algorithm(const std::string& name) {
  const size_t at = name.find('@');
  if (at == std::string::npos) return Registry::instance().make_conv_algorithm("cpu", name);
  KnobValues knobs;
  fft_tile_knob.set(knobs, *parse_fft_tile_choice(name.substr(at + 1)));
  return Registry::instance().make_conv_algorithm("cpu", name.substr(0, at), knobs);
}

class AlgorithmMatchesDirect : public ::testing::TestWithParam<MatchParam> {
 protected:
  void SetUp() override {
    const auto& [algorithm, named, layout, threads] = GetParam();
    problem = with_layout(named.problem, layout);
    algo = make_algorithm(algorithm);
    if (!algo->supports(problem))
      GTEST_SKIP() << algorithm << " does not support " << problem.key() << ": "
                   << algo->unsupported_reason(problem);
    pool = std::make_unique<ThreadPool>(threads);
    tolerance = tolerance_for(algorithm);
    ops = random_operands(problem, 31);
  }

  ConvProblem problem;
  std::unique_ptr<ConvAlgorithm> algo;
  std::unique_ptr<ConvAlgorithm> direct = Registry::instance().make_conv_algorithm("cpu", "direct");
  std::unique_ptr<ThreadPool> pool;
  ThreadPool reference_pool{1};
  double tolerance = 0;
  ConvOperands ops;
};

TEST_P(AlgorithmMatchesDirect, Forward) {
  EXPECT_LE(relative_error(run_forward(*algo, problem, *pool, ops.x, ops.w),
                           run_forward(*direct, problem, reference_pool, ops.x, ops.w)),
            tolerance);
}

TEST_P(AlgorithmMatchesDirect, BackwardData) {
  EXPECT_LE(relative_error(run_backward_data(*algo, problem, *pool, ops.dy, ops.w),
                           run_backward_data(*direct, problem, reference_pool, ops.dy, ops.w)),
            tolerance);
}

TEST_P(AlgorithmMatchesDirect, BackwardFilter) {
  EXPECT_LE(relative_error(run_backward_filter(*algo, problem, *pool, ops.x, ops.dy),
                           run_backward_filter(*direct, problem, reference_pool, ops.x, ops.dy)),
            tolerance);
}

TEST_P(AlgorithmMatchesDirect, RepeatedCallsGiveTheSameResult) {
  // Cached plans and per-instance state must not leak between calls.
  const Tensor first = run_forward(*algo, problem, *pool, ops.x, ops.w);
  run_backward_filter(*algo, problem, *pool, ops.x, ops.dy);
  EXPECT_EQ(relative_error(run_forward(*algo, problem, *pool, ops.x, ops.w), first), 0.0);
}

std::string match_name(const ::testing::TestParamInfo<MatchParam>& info) {
  std::string algo = std::get<0>(info.param);
  for (char& ch : algo)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return algo + "_" + std::get<1>(info.param).name + "_" + to_string(std::get<2>(info.param)) +
         "_threads" + std::to_string(std::get<3>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllCpuAlgorithms, AlgorithmMatchesDirect,
                         ::testing::Combine(::testing::ValuesIn(cpu_algorithms()),
                                            ::testing::ValuesIn(match_cases()),
                                            ::testing::Values(Layout::NCHW, Layout::NHWC),
                                            ::testing::Values(1, 3)),
                         match_name);

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
