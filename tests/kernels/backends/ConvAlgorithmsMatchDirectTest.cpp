// Every convolution algorithm of every registered backend against the cpu `direct`
// (differential test): forward, backward data and backward filter, both layouts; cpu
// algorithms on pools of 1 and 3 threads, a device backend's on its lane stream (skipped,
// with the backend's reason, where it cannot run: cuda without a device). The cpu's
// fft-fftw and fft-own run once more as "<algorithm>@8" (cpu_algorithms()).
#include <gtest/gtest.h>

#include <memory>

#include "core/base/Registry.h"
#include "tests/kernels/cpu/ConvTestSupport.h"

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

// An algorithm as the registry names it: backend and name.
struct BackendAlgorithm {
  std::string backend, algorithm;
};
using MatchParam = std::tuple<BackendAlgorithm, NamedProblem, Layout, int>;

// Every backend's algorithms with the pool sizes they run on: the cpu's on 1 and 3
// threads, a device backend's (which ignores the pool) once.
std::vector<MatchParam> match_params() {
  std::vector<MatchParam> params;
  for (const std::string& backend : Registry::instance().backends()) {
    const bool cpu = backend == "cpu";
    const std::vector<std::string> names =
        cpu ? cpu_algorithms() : Registry::instance().conv_algorithms(backend);
    for (const std::string& name : names)
      for (const NamedProblem& problem : match_cases())
        for (Layout layout : {Layout::NCHW, Layout::NHWC})
          for (int threads : cpu ? std::vector<int>{1, 3} : std::vector<int>{1})
            params.emplace_back(BackendAlgorithm{backend, name}, problem, layout, threads);
  }
  return params;
}

class AlgorithmMatchesDirect : public ::testing::TestWithParam<MatchParam> {
 protected:
  void SetUp() override {
    const auto& [which, named, layout, threads] = GetParam();
    std::string reason;
    backend = test_backend(which.backend, &reason);
    if (!backend) GTEST_SKIP() << which.backend << ": " << reason;
    problem = with_layout(named.problem, layout);
    algo = make_algorithm(which.algorithm, which.backend);
    if (!algo->supports(problem))
      GTEST_SKIP() << which.backend << " " << which.algorithm << " does not support "
                   << problem.key() << ": " << algo->unsupported_reason(problem);
    pool = std::make_unique<ThreadPool>(threads);
    tolerance = tolerance_for(which.algorithm, which.backend);
    ops = random_operands(problem, 31);
  }

  Backend* backend = nullptr;
  ConvProblem problem;
  std::unique_ptr<ConvAlgorithm> algo;
  std::unique_ptr<ConvAlgorithm> direct = Registry::instance().make_conv_algorithm("cpu", "direct");
  std::unique_ptr<ThreadPool> pool;
  ThreadPool reference_pool{1};
  double tolerance = 0;
  ConvOperands ops;
};

TEST_P(AlgorithmMatchesDirect, Forward) {
  EXPECT_LE(relative_error(run_forward(*algo, problem, *pool, ops.x, ops.w, backend),
                           run_forward(*direct, problem, reference_pool, ops.x, ops.w)),
            tolerance);
}

TEST_P(AlgorithmMatchesDirect, BackwardData) {
  EXPECT_LE(relative_error(run_backward_data(*algo, problem, *pool, ops.dy, ops.w, backend),
                           run_backward_data(*direct, problem, reference_pool, ops.dy, ops.w)),
            tolerance);
}

TEST_P(AlgorithmMatchesDirect, BackwardFilter) {
  EXPECT_LE(relative_error(run_backward_filter(*algo, problem, *pool, ops.x, ops.dy, backend),
                           run_backward_filter(*direct, problem, reference_pool, ops.x, ops.dy)),
            tolerance);
}

TEST_P(AlgorithmMatchesDirect, RepeatedCallsGiveTheSameResult) {
  // Cached plans and per-instance state must not leak between calls.
  const Tensor first = run_forward(*algo, problem, *pool, ops.x, ops.w, backend);
  run_backward_filter(*algo, problem, *pool, ops.x, ops.dy, backend);
  EXPECT_EQ(relative_error(run_forward(*algo, problem, *pool, ops.x, ops.w, backend), first), 0.0);
}

std::string match_name(const ::testing::TestParamInfo<MatchParam>& info) {
  const BackendAlgorithm& which = std::get<0>(info.param);
  // cpu names stay as they were; other backends' names start with the backend.
  std::string algo =
      which.backend == "cpu" ? which.algorithm : which.backend + "_" + which.algorithm;
  for (char& ch : algo)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return algo + "_" + std::get<1>(info.param).name + "_" + to_string(std::get<2>(info.param)) +
         "_threads" + std::to_string(std::get<3>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, AlgorithmMatchesDirect, ::testing::ValuesIn(match_params()),
                         match_name);

}  // namespace
}  // namespace tunescope::conv_test
