// The ConvAlgorithm contract for every algorithm of every registered backend: refusals
// come with a reason, mismatched tensors and short workspaces throw tunescope::Error (on
// the backend's memory and stream; skipped with the backend's reason where it cannot run),
// and every cpu kernel is traced under "<algorithm>.<pass>[.<step>]" (device kernels are
// traced by CUPTI: tests/kernels/cuda/CuptiKernelTest.cpp).
#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "core/base/AlignedBuffer.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "profiler/Tracer.h"
#include "tests/kernels/cpu/ConvTestSupport.h"

namespace tunescope::conv_test {
namespace {

// backend/algorithm, as the registry names them.
using ContractParam = std::pair<std::string, std::string>;

std::vector<ContractParam> every_algorithm() {
  std::vector<ContractParam> params;
  for (const std::string& backend : Registry::instance().backends())
    for (const std::string& name : Registry::instance().conv_algorithms(backend))
      params.emplace_back(backend, name);
  return params;
}

class AlgorithmContract : public ::testing::TestWithParam<ContractParam> {
 protected:
  const std::string& name() const { return GetParam().second; }
  // The backend's memory (tensors, workspaces) and lane 0's stream; null when it cannot
  // run here, and the test skips with its reason.
  Backend* backend() {
    std::string reason;
    Backend* made = test_backend(GetParam().first, &reason);
    if (made) exec.stream = made->lane_stream(0, 0);
    skip_reason = reason;
    return made;
  }
  MemorySpace& memory() { return test_backend(GetParam().first, nullptr)->memory(); }
  ConvOperands operands(const ConvProblem& p, uint32_t seed) {
    const ConvOperands host = random_operands(p, seed);
    return {to_memory(host.x, memory()), to_memory(host.w, memory()), to_memory(host.dy, memory())};
  }

  std::unique_ptr<ConvAlgorithm> algo =
      Registry::instance().make_conv_algorithm(GetParam().first, GetParam().second);
  ThreadPool pool{2};
  ExecContext exec{pool};
  std::string skip_reason;
  ConvProblem problem = make_problem(2, 3, 8, 9, 4, 3, 3, 1, 1, 1, 1);
};

#define SKIP_WITHOUT_BACKEND() \
  if (!backend()) GTEST_SKIP() << GetParam().first << ": " << skip_reason

TEST_P(AlgorithmContract, IsRegisteredUnderItsName) { EXPECT_EQ(algo->name(), name()); }

TEST_P(AlgorithmContract, RefusesAnInvalidProblemWithAReason) {
  ConvProblem bad = problem;
  bad.kernel_h = 11;  // larger than the padded input
  EXPECT_FALSE(algo->supports(bad));
  EXPECT_NE(algo->unsupported_reason(bad), "");
  bad = problem;
  bad.out_channels = 0;
  EXPECT_NE(algo->unsupported_reason(bad), "");
}

// Grouped and depthwise problems (ConvProblem::groups > 1): an algorithm runs them,
// matching the reference within its stated tolerance in all three passes, or declines
// them through unsupported_reason() naming the groups. `direct` must run them.
TEST_P(AlgorithmContract, RunsGroupedProblemsOrDeclinesThem) {
  SKIP_WITHOUT_BACKEND();  // without its device an algorithm declines everything for that
  Backend* on = test_backend(GetParam().first, nullptr);
  for (const ConvProblem& grouped : {make_problem(2, 8, 7, 6, 8, 3, 3, 1, 1, 1, 1, 8),
                                     make_problem(2, 6, 6, 7, 4, 3, 3, 2, 2, 1, 1, 2)})
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      const ConvProblem p = with_layout(grouped, layout);
      if (!algo->supports(p)) {
        EXPECT_NE(name(), "direct") << p.key();
        EXPECT_NE(algo->unsupported_reason(p).find("grouped convolution (" +
                                                   std::to_string(p.groups) + " groups)"),
                  std::string::npos)
            << algo->unsupported_reason(p);
        continue;
      }
      const ConvOperands ops = random_operands(p, 71);
      const double tolerance = tolerance_for(name(), GetParam().first);
      EXPECT_LE(relative_error(run_forward(*algo, p, pool, ops.x, ops.w, on),
                               reference_forward(p, ops.x, ops.w)),
                tolerance)
          << p.key();
      EXPECT_LE(relative_error(run_backward_data(*algo, p, pool, ops.dy, ops.w, on),
                               reference_backward_data(p, ops.dy, ops.w)),
                tolerance)
          << p.key();
      EXPECT_LE(relative_error(run_backward_filter(*algo, p, pool, ops.x, ops.dy, on),
                               reference_backward_filter(p, ops.x, ops.dy)),
                tolerance)
          << p.key();
    }
}

TEST_P(AlgorithmContract, WrongTensorsThrow) {
  SKIP_WITHOUT_BACKEND();
  for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
    const ConvProblem p = with_layout(problem, layout);
    const Layout other = layout == Layout::NCHW ? Layout::NHWC : Layout::NCHW;
    const ConvOperands ops = operands(p, 61);
    const size_t bytes = algo->workspace_bytes(p);
    AlignedBuffer workspace(bytes, memory());
    const ConvCall call{p, exec, workspace.data(), bytes};
    Tensor y(p.output(), p.layout, memory()), dx(p.input, p.layout, memory()),
        dw(p.filter(), p.layout, memory());
    Tensor wrong_y({2, 4, 8, 8}, p.layout, memory());
    Tensor wrong_layout_x(p.input, other, memory());
    Tensor wrong_dx({2, 3, 8, 10}, p.layout, memory());
    Tensor wrong_w({4, 3, 3, 2}, p.layout, memory());
    Tensor no_storage;
    EXPECT_THROW(algo->forward(call, ops.x, ops.w, wrong_y), Error);
    EXPECT_THROW(algo->forward(call, wrong_layout_x, ops.w, y), Error);
    EXPECT_THROW(algo->forward(call, ops.x, wrong_w, y), Error);
    EXPECT_THROW(algo->backward_data(call, ops.dy, ops.w, wrong_dx), Error);
    EXPECT_THROW(algo->backward_data(call, ops.x, ops.w, dx), Error);  // x given as dy
    EXPECT_THROW(algo->backward_filter(call, ops.x, ops.dy, wrong_w), Error);
    EXPECT_THROW(algo->backward_filter(call, no_storage, ops.dy, dw), Error);
    // The message names the algorithm and the problem.
    try {
      algo->forward(call, ops.x, ops.w, wrong_y);
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(name()), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find(p.key()), std::string::npos) << error.what();
    }
  }
}

TEST_P(AlgorithmContract, ShortWorkspaceThrows) {
  SKIP_WITHOUT_BACKEND();
  const ConvOperands ops = operands(problem, 62);
  const size_t bytes = algo->workspace_bytes(problem);
  if (bytes == 0) GTEST_SKIP() << name() << " needs no workspace";
  AlignedBuffer workspace(bytes, memory());
  Tensor y(problem.output(), problem.layout, memory()), dx(problem.input, problem.layout, memory()),
      dw(problem.filter(), problem.layout, memory());
  const ConvCall short_call{problem, exec, workspace.data(), bytes - 1};
  EXPECT_THROW(algo->forward(short_call, ops.x, ops.w, y), Error);
  EXPECT_THROW(algo->backward_data(short_call, ops.dy, ops.w, dx), Error);
  EXPECT_THROW(algo->backward_filter(short_call, ops.x, ops.dy, dw), Error);
  const ConvCall no_workspace{problem, exec, nullptr, 0};
  EXPECT_THROW(algo->forward(no_workspace, ops.x, ops.w, y), Error);
}

TEST_P(AlgorithmContract, TracesEveryKernelUnderItsPass) {
  if (GetParam().first != "cpu")
    GTEST_SKIP() << "device kernels are traced by CUPTI (tests/kernels/cuda/CuptiKernelTest.cpp)";
  profiler::Tracer tracer;
  const ExecContext traced{pool, &tracer, 3, 2};
  for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
    const ConvProblem p = with_layout(problem, layout);
    // onednn:winograd runs only where oneDNN has a Winograd kernel for the problem.
    if (!algo->supports(p)) GTEST_SKIP() << name() << ": " << algo->unsupported_reason(p);
    const ConvOperands ops = random_operands(p, 63);
    const size_t bytes = algo->workspace_bytes(p);
    AlignedBuffer workspace(bytes);
    const ConvCall call{p, traced, workspace.data(), bytes};
    Tensor y(p.output(), p.layout), dx(p.input, p.layout), dw(p.filter(), p.layout);
    const std::pair<const char*, std::function<void()>> passes[] = {
        {"fwd", [&] { algo->forward(call, ops.x, ops.w, y); }},
        {"bwd_data", [&] { algo->backward_data(call, ops.dy, ops.w, dx); }},
        {"bwd_filter", [&] { algo->backward_filter(call, ops.x, ops.dy, dw); }},
    };
    for (const auto& [tag, run] : passes) {
      tracer.start();
      run();
      tracer.stop();
      const profiler::Trace trace = tracer.collect({});
      ASSERT_FALSE(trace.activities.empty()) << name() << " " << tag;
      const std::string prefix = name() + "." + tag;
      double flops = 0;
      for (const profiler::Activity& a : trace.activities) {
        EXPECT_TRUE(a.name == prefix || a.name.str().rfind(prefix + ".", 0) == 0) << a.name;
        EXPECT_EQ(a.device, 3);
        EXPECT_EQ(a.stream, 2);
        EXPECT_LE(a.start_ns, a.end_ns);
        flops += a.flops;
      }
      EXPECT_GT(flops, 0) << prefix;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, AlgorithmContract, ::testing::ValuesIn(every_algorithm()),
                         [](const auto& info) {
                           // cpu names stay as they were; others start with the backend.
                           std::string name = info.param.first == "cpu"
                                                  ? info.param.second
                                                  : info.param.first + "_" + info.param.second;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

TEST(CpuConvAlgorithms, TheThreeAreRegistered) {
  const auto names = Registry::instance().conv_algorithms("cpu");
  const std::set<std::string> have(names.begin(), names.end());
  for (const char* name : {"direct", "gemm", "fft-fftw"}) EXPECT_TRUE(have.count(name)) << name;
}

TEST(FftFftw, RefusesTransformsTooLargeForMemory) {
  auto fft = Registry::instance().make_conv_algorithm("cpu", "fft-fftw");
  const ConvProblem huge = make_problem(1, 4096, 8192, 8192, 4096, 3, 3, 1, 1, 1, 1);
  EXPECT_FALSE(fft->supports(huge));
  EXPECT_NE(fft->unsupported_reason(huge).find("workspace"), std::string::npos)
      << fft->unsupported_reason(huge);
  EXPECT_EQ(fft->workspace_bytes(huge), 0u);
}

}  // namespace
}  // namespace tunescope::conv_test
