// The cudnn:* convolution algorithms. Without a device: registration and names, cuDNN's
// documented limits, find's winner choice, reasons that say "no CUDA device", argument
// errors. With a device: every family and cudnn:find, forward / backward data / backward
// filter on lenet5 and resnet18-small layers (kernels 1, 3 and 5, strides 1 and 2,
// padding, NCHW and NHWC) against the CPU `direct` algorithm on the same host inputs.
//
// Stated error bounds, max |cuDNN - direct| / max |direct|:
//   matrix-product algorithms (implicit_gemm, gemm, algo_0, algo_1, algo_3): 1e-3, float
//     sums in another order (FMA math, no TF32: CudnnConvParams::math);
//   fft, fft_tiling: 2e-3. cuDNN states no bound; a float FFT adds rounding of order
//     epsilon x log2(transform size) relative to the largest value, as the CPU fft-*
//     algorithms (1e-3 in ConvAlgorithmsMatchDirectTest) do, with margin for cuFFT's order;
//   winograd, winograd_nonfused: 5e-3. cuDNN states no bound; the Winograd transforms'
//     matrices have entries up to 10x larger than 1 for F(4x4, 3x3) and more for 5x5
//     filters, which scales the rounding error of the transformed products.
#include "kernels/cuda/ConvCudnn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include "CudaConvTestSupport.h"
#include "CudaTestSupport.h"
#include "core/base/AlignedBuffer.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "kernels/cuda/CudaMemory.h"
#include "profiler/Tracer.h"
#include "tests/kernels/cpu/ConvTestSupport.h"

namespace tunescope::cuda {
namespace {

using conv_test::make_problem;
using conv_test::NamedProblem;
using conv_test::with_layout;
using conv_test_cuda::device_pass;
using conv_test_cuda::lane_stream;
using conv_test_cuda::model_layers;
using conv_test_cuda::Reference;
using conv_test_cuda::reference_for;

std::vector<std::string> cudnn_names() {
  std::vector<std::string> names;
  for (const CudnnAlgorithmFamily& family : cudnn_algorithm_families())
    names.push_back(family.registered_name);
  names.push_back(kCudnnFindName);
  return names;
}

ConvProblem resnet_3x3(Layout layout) {
  return with_layout(make_problem(4, 16, 32, 32, 16, 3, 3, 1, 1, 1, 1), layout);
}

std::unique_ptr<ConvAlgorithm> make(const std::string& name) {
  return Registry::instance().make_conv_algorithm("cuda", name);
}

// ---- without a device ----------------------------------------------------------------

TEST(ConvCudnnRegistration, EveryFamilyAndFindAreCudaAlgorithmsUnderTheirNames) {
  const std::vector<std::string> registered = Registry::instance().conv_algorithms("cuda");
  const std::set<std::string> known(registered.begin(), registered.end());
  const std::vector<std::string> names = cudnn_names();
  EXPECT_EQ(names.size(), size_t{CUDNN_CONVOLUTION_FWD_ALGO_COUNT} + 1);
  for (const char* name :
       {"cudnn:implicit_gemm", "cudnn:implicit_precomp_gemm", "cudnn:gemm", "cudnn:direct",
        "cudnn:fft", "cudnn:fft_tiling", "cudnn:winograd", "cudnn:winograd_nonfused", "cudnn:find"})
    EXPECT_TRUE(std::find(names.begin(), names.end(), name) != names.end()) << name;
  for (const std::string& name : names) {
    EXPECT_TRUE(known.count(name)) << name << " is not registered for cuda";
    EXPECT_EQ(make(name)->name(), name);
  }
  // They are CUDA algorithms only.
  for (const std::string& cpu : Registry::instance().conv_algorithms("cpu"))
    EXPECT_NE(cpu.rfind("cudnn:", 0), 0u) << cpu;
}

CudnnAlgorithmInfo info(CudnnPass pass, const char* name) { return cudnn_algorithm(pass, name); }

TEST(CudnnDocumentedLimit, MatrixProductAlgorithmsHaveNone) {
  ConvProblem odd = make_problem(2, 3, 9, 8, 5, 7, 3, 3, 2, 0, 1);
  odd.layout = Layout::NHWC;
  for (const char* name : {"implicit_gemm", "implicit_precomp_gemm", "gemm"})
    EXPECT_EQ(cudnn_documented_limit(info(CudnnPass::forward, name), odd), "") << name;
  for (const char* name : {"algo_0", "algo_1"}) {
    EXPECT_EQ(cudnn_documented_limit(info(CudnnPass::backward_data, name), odd), "") << name;
    EXPECT_EQ(cudnn_documented_limit(info(CudnnPass::backward_filter, name), odd), "") << name;
  }
  EXPECT_EQ(cudnn_documented_limit(info(CudnnPass::backward_filter, "algo_3"), odd), "");
}

TEST(CudnnDocumentedLimit, NotImplementedAlgorithmsSaySo) {
  const ConvProblem p = resnet_3x3(Layout::NCHW);
  EXPECT_TRUE(
      contains(cudnn_documented_limit(info(CudnnPass::forward, "direct"), p), "not implemented"));
  EXPECT_TRUE(contains(cudnn_documented_limit(info(CudnnPass::backward_filter, "winograd"), p),
                       "not implemented"));
}

TEST(CudnnDocumentedLimit, FftAndWinogradLimitsOfEachPass) {
  struct Case {
    const char* name;
    ConvProblem problem;
    const char* expected;  // "" = allowed
  };
  const ConvProblem nchw = resnet_3x3(Layout::NCHW);
  const ConvProblem nhwc = resnet_3x3(Layout::NHWC);
  const Case cases[] = {
      {"fft", nchw, ""},
      {"fft", make_problem(2, 3, 32, 32, 4, 3, 3, 2, 2, 1, 1), "stride 1"},
      {"fft", make_problem(2, 3, 32, 32, 4, 3, 3, 1, 2, 1, 1), "stride 1"},
      {"fft", nhwc, "NCHW"},
      {"fft", make_problem(2, 3, 8, 8, 4, 1, 1, 1, 1, 1, 1), "padding smaller than the filter"},
      {"fft", make_problem(1, 1, 254, 254, 1, 3, 3, 1, 1, 1, 1),
       ""},  // 256 padded: the limit itself
      {"fft", make_problem(1, 1, 255, 20, 1, 3, 3, 1, 1, 1, 1), "256x256"},
      {"fft_tiling", make_problem(1, 1, 300, 300, 1, 3, 3, 1, 1, 1, 1), ""},
      {"fft_tiling", make_problem(1, 1, 40, 40, 1, 33, 3, 1, 1, 0, 0), "32x32"},
      {"fft_tiling", nhwc, "NCHW"},
      {"winograd", nchw, ""},
      {"winograd", nhwc, ""},
      {"winograd", make_problem(2, 3, 16, 16, 4, 5, 5, 1, 1, 2, 2), "3x3 filter"},
      {"winograd", make_problem(2, 3, 16, 16, 4, 3, 3, 2, 2, 1, 1), "stride 1"},
      {"winograd_nonfused", make_problem(2, 3, 16, 16, 4, 5, 5, 1, 1, 2, 2), ""},
      {"winograd_nonfused", nhwc, ""},
      {"winograd_nonfused", make_problem(2, 3, 16, 16, 4, 7, 7, 1, 1, 3, 3), "3x3 or 5x5"},
      {"winograd_nonfused", make_problem(2, 3, 16, 16, 4, 3, 5, 1, 1, 1, 2), "3x3 or 5x5"},
  };
  for (const Case& c : cases)
    for (CudnnPass pass :
         {CudnnPass::forward, CudnnPass::backward_data, CudnnPass::backward_filter}) {
      if (std::string(c.name) == "winograd" && pass == CudnnPass::backward_filter)
        continue;  // not implemented
      const std::string reason = cudnn_documented_limit(info(pass, c.name), c.problem);
      const std::string where = std::string(c.name) + " " + to_string(pass) + " " + c.problem.key();
      if (std::string(c.expected).empty()) {
        EXPECT_EQ(reason, "") << where;
      } else {
        EXPECT_TRUE(contains(reason, c.expected)) << where << ": " << reason;
        EXPECT_TRUE(contains(reason, to_string(pass))) << "the reason names the pass: " << reason;
      }
    }
}

TEST(CudnnFindWinner, FastestSuccessfulFp32RowWithinTheLimit) {
  const CudnnFindResult rows[] = {
      {CUDNN_CONVOLUTION_FWD_ALGO_FFT, CUDNN_STATUS_SUCCESS, 0.5f, 4000,
       CUDNN_DEFAULT_MATH},  // TF32 allowed
      {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, CUDNN_STATUS_NOT_SUPPORTED, 0.1f, 0, CUDNN_FMA_MATH},
      {CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, CUDNN_STATUS_SUCCESS, 0.6f, 9000,
       CUDNN_FMA_MATH},  // too large
      {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_STATUS_SUCCESS, 1.0f, 0, CUDNN_FMA_MATH},
      {CUDNN_CONVOLUTION_FWD_ALGO_GEMM, CUDNN_STATUS_SUCCESS, 0.9f, 8000, CUDNN_FMA_MATH},
  };
  const auto winner = pick_cudnn_find_winner(rows, CUDNN_FMA_MATH, 8000);
  ASSERT_TRUE(winner.has_value());
  EXPECT_EQ(winner->algorithm, CUDNN_CONVOLUTION_FWD_ALGO_GEMM);
  EXPECT_EQ(pick_cudnn_find_winner(rows, CUDNN_FMA_MATH, 0)->algorithm,
            CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);
  EXPECT_EQ(pick_cudnn_find_winner(rows, CUDNN_DEFAULT_MATH, 8000)->algorithm,
            CUDNN_CONVOLUTION_FWD_ALGO_FFT);
  EXPECT_FALSE(pick_cudnn_find_winner(std::span(rows).first(3), CUDNN_FMA_MATH, 4000).has_value());
  EXPECT_FALSE(pick_cudnn_find_winner({}, CUDNN_FMA_MATH, 1 << 30).has_value());
}

TEST(ConvCudnn, WithoutADeviceEveryAlgorithmSaysWhyAndNeedsNoWorkspace) {
  if (cuda_unavailable_reason().empty()) GTEST_SKIP() << "a CUDA device is present";
  for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
    const ConvProblem p = resnet_3x3(layout);
    for (const std::string& name : cudnn_names()) {
      const auto algo = make(name);
      std::string reason;
      EXPECT_NO_THROW(reason = algo->unsupported_reason(p)) << name;
      EXPECT_FALSE(algo->supports(p)) << name;
      EXPECT_EQ(algo->workspace_bytes(p), 0u) << name;
      EXPECT_FALSE(dynamic_cast<const ConvCudnn&>(*algo).algorithms(p).has_value()) << name;
      const bool documented =
          name == "cudnn:direct" || (layout == Layout::NHWC && contains(name, "fft"));
      if (!documented)
        EXPECT_TRUE(contains(reason, "no CUDA device")) << name << ": " << reason;
      else
        EXPECT_FALSE(reason.empty()) << name;
    }
  }
}

TEST(ConvCudnn, UnsupportedReasonNeverThrowsAndNamesTheCause) {
  ConvProblem invalid = resnet_3x3(Layout::NCHW);
  invalid.kernel_w = 0;
  const ConvProblem strided = make_problem(2, 3, 16, 16, 4, 3, 3, 2, 2, 1, 1);
  for (const std::string& name : cudnn_names()) {
    const auto algo = make(name);
    std::string reason;
    EXPECT_NO_THROW(reason = algo->unsupported_reason(invalid)) << name;
    EXPECT_TRUE(contains(reason, "kernel width")) << name << ": " << reason;
    EXPECT_EQ(algo->workspace_bytes(invalid), 0u);
  }
  // Documented limits hold with or without a device.
  for (const char* name :
       {"cudnn:fft", "cudnn:fft_tiling", "cudnn:winograd", "cudnn:winograd_nonfused"})
    EXPECT_TRUE(contains(make(name)->unsupported_reason(strided), "needs stride 1")) << name;
  EXPECT_TRUE(contains(make("cudnn:direct")->unsupported_reason(strided), "not implemented"));
}

TEST(ConvCudnn, PassOnAnUnsupportedProblemThrowsUnsupportedWithTheReason) {
  const ConvProblem strided = make_problem(2, 3, 16, 16, 4, 3, 3, 2, 2, 1, 1);
  const Tensor x(strided.input, strided.layout), w(strided.filter(), strided.layout);
  Tensor y(strided.output(), strided.layout);
  ThreadPool pool(1);
  const ExecContext exec{pool};
  try {
    make("cudnn:winograd")->forward(ConvCall{strided, exec}, x, w, y);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_TRUE(contains(e.what(), "cudnn:winograd.fwd")) << e.what();
    EXPECT_TRUE(contains(e.what(), "needs stride 1")) << e.what();
  }
}

TEST(ConvCudnn, PassWithAMisshapenTensorIsARuntimeErrorNamingIt) {
  const ConvProblem p = resnet_3x3(Layout::NCHW);
  const Tensor x(p.input, p.layout), dy(p.output(), p.layout);
  Tensor dw({16, 16, 5, 5}, p.layout);
  ThreadPool pool(1);
  const ExecContext exec{pool};
  try {
    make("cudnn:implicit_gemm")->backward_filter(ConvCall{p, exec}, x, dy, dw);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::runtime);
    EXPECT_TRUE(contains(e.what(), "dw")) << e.what();
  }
}

// ---- with a device -------------------------------------------------------------------

double tolerance_for(const std::string& cudnn_algorithm) {
  if (cudnn_algorithm.rfind("winograd", 0) == 0) return 5e-3;
  if (cudnn_algorithm.rfind("fft", 0) == 0) return 2e-3;
  return 1e-3;
}

using DeviceParam = std::tuple<std::string, NamedProblem, Layout>;

class ConvCudnnMatchesDirect : public ::testing::TestWithParam<DeviceParam> {
 protected:
  void SetUp() override {
    TS_SKIP_WITHOUT_CUDA_DEVICE();
    const auto& [name, named, layout] = GetParam();
    problem = with_layout(named.problem, layout);
    algo = &instance_for(name, problem);
    std::string reason;
    ASSERT_NO_THROW(reason = algo->unsupported_reason(problem));
    // cuDNN's autotuner runs every layer in both layouts, and its general algorithms
    // every NCHW layer (NHWC support of the legacy algorithms is left to the device query).
    if (name == kCudnnFindName || (name == "cudnn:implicit_gemm" && layout == Layout::NCHW)) {
      ASSERT_EQ(reason, "") << name << " on " << problem.key();
    }
    if (!reason.empty())
      GTEST_SKIP() << name << " does not support " << problem.key() << ": " << reason;
    const auto algorithms = dynamic_cast<const ConvCudnn&>(*algo).algorithms(problem);
    ASSERT_TRUE(algorithms.has_value());
    chosen = *algorithms;
    if (name == kCudnnFindName) {
      EXPECT_LE(algo->workspace_bytes(problem), kCudnnFindWorkspaceLimit);
    }
  }

  // Compares one pass and prints the error for the GPU check's log.
  void expect_close(CudnnPass pass, int algorithm_value, const Tensor& got, const Tensor& want) {
    const std::string cudnn_name =
        cudnn_algorithms(pass)[static_cast<size_t>(algorithm_value)].name;
    const double error = conv_test::relative_error(got, want);
    std::printf("%-28s %-44s %-10s %-22s error %.2e workspace %zu\n", algo->name().c_str(),
                problem.key().c_str(), to_string(pass), cudnn_name.c_str(), error,
                algo->workspace_bytes(problem));
    EXPECT_LE(error, tolerance_for(cudnn_name))
        << algo->name() << " " << to_string(pass) << " (" << cudnn_name << ") on " << problem.key();
  }

  // One instance per algorithm and problem, as the engine keeps one per layer, so
  // cudnn:find times each problem once for its three passes.
  static ConvAlgorithm& instance_for(const std::string& name, const ConvProblem& p) {
    static std::map<std::string, std::unique_ptr<ConvAlgorithm>> instances;
    std::unique_ptr<ConvAlgorithm>& slot = instances[name + " " + p.key()];
    if (!slot) slot = make(name);
    return *slot;
  }

  ConvProblem problem;
  ConvAlgorithm* algo = nullptr;
  CudnnAlgorithmFamily chosen;
};

TEST_P(ConvCudnnMatchesDirect, Forward) {
  const Reference& ref = reference_for(problem);
  const Tensor x = to_memory(ref.host.x, CudaMemory::of_device(0));
  const Tensor w = to_memory(ref.host.w, CudaMemory::of_device(0));
  const Tensor y =
      device_pass(*algo, problem, problem.output(),
                  [&](const ConvCall& call, Tensor& out) { algo->forward(call, x, w, out); });
  expect_close(CudnnPass::forward, chosen.forward, y, ref.y);
}

TEST_P(ConvCudnnMatchesDirect, BackwardData) {
  const Reference& ref = reference_for(problem);
  const Tensor dy = to_memory(ref.host.dy, CudaMemory::of_device(0));
  const Tensor w = to_memory(ref.host.w, CudaMemory::of_device(0));
  const Tensor dx = device_pass(
      *algo, problem, problem.input,
      [&](const ConvCall& call, Tensor& out) { algo->backward_data(call, dy, w, out); });
  expect_close(CudnnPass::backward_data, chosen.backward_data, dx, ref.dx);
}

TEST_P(ConvCudnnMatchesDirect, BackwardFilter) {
  const Reference& ref = reference_for(problem);
  const Tensor x = to_memory(ref.host.x, CudaMemory::of_device(0));
  const Tensor dy = to_memory(ref.host.dy, CudaMemory::of_device(0));
  const Tensor dw = device_pass(
      *algo, problem, problem.filter(),
      [&](const ConvCall& call, Tensor& out) { algo->backward_filter(call, x, dy, out); });
  expect_close(CudnnPass::backward_filter, chosen.backward_filter, dw, ref.dw);
}

std::string param_name(const ::testing::TestParamInfo<DeviceParam>& info) {
  std::string name = std::get<0>(info.param).substr(std::string("cudnn:").size()) + "_" +
                     std::get<1>(info.param).name + "_" + to_string(std::get<2>(info.param));
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(ModelLayers, ConvCudnnMatchesDirect,
                         ::testing::Combine(::testing::ValuesIn(cudnn_names()),
                                            ::testing::ValuesIn(model_layers()),
                                            ::testing::Values(Layout::NCHW, Layout::NHWC)),
                         param_name);

TEST(ConvCudnnDevice, EachPassIsOneRangeNamedAfterTheAlgorithmAndPass) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  const ConvProblem p = resnet_3x3(Layout::NHWC);
  const auto algo = make("cudnn:implicit_gemm");
  ASSERT_EQ(algo->unsupported_reason(p), "");
  const Reference& ref = reference_for(p);
  const Tensor x = to_memory(ref.host.x, CudaMemory::of_device(0));
  const Tensor w = to_memory(ref.host.w, CudaMemory::of_device(0));
  const Tensor dy = to_memory(ref.host.dy, CudaMemory::of_device(0));
  profiler::Tracer tracer;
  tracer.start();
  device_pass(
      *algo, p, p.output(), [&](const ConvCall& c, Tensor& out) { algo->forward(c, x, w, out); },
      &tracer);
  device_pass(
      *algo, p, p.input,
      [&](const ConvCall& c, Tensor& out) { algo->backward_data(c, dy, w, out); }, &tracer);
  device_pass(
      *algo, p, p.filter(),
      [&](const ConvCall& c, Tensor& out) { algo->backward_filter(c, x, dy, out); }, &tracer);
  tracer.stop();
  const profiler::Trace trace = tracer.collect({});
  std::vector<std::string> names;
  for (const profiler::Range& r : trace.ranges) names.push_back(r.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"cudnn:implicit_gemm.fwd", "cudnn:implicit_gemm.bwd_data",
                                      "cudnn:implicit_gemm.bwd_filter"}));
  EXPECT_TRUE(trace.activities.empty())
      << "device work is CUPTI's to record, not host-timed kernels";
}

TEST(ConvCudnnDevice, TooSmallAWorkspaceAndHostTensorsAreRuntimeErrors) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  const ConvProblem p = resnet_3x3(Layout::NCHW);
  MemorySpace& memory = CudaMemory::of_device(0);
  const Tensor x(p.input, p.layout, memory), w(p.filter(), p.layout, memory);
  Tensor y(p.output(), p.layout, memory);
  ThreadPool pool(1);
  const ExecContext exec{pool, nullptr, 0, 0, NativeStream(lane_stream())};
  // The first family that needs a workspace here (FFT does on a 3x3 NCHW layer).
  std::unique_ptr<ConvAlgorithm> hungry;
  for (const std::string& name : cudnn_names())
    if (auto algo = make(name); algo->supports(p) && algo->workspace_bytes(p) > 0) {
      hungry = std::move(algo);
      break;
    }
  if (!hungry) GTEST_SKIP() << "no cuDNN algorithm needs a workspace for " << p.key();
  const size_t needed = hungry->workspace_bytes(p);
  AlignedBuffer small(needed / 2, memory);
  try {
    hungry->forward(ConvCall{p, exec, small.data(), small.bytes()}, x, w, y);
    ADD_FAILURE() << hungry->name() << ": no error for a workspace of " << small.bytes() << " < "
                  << needed;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::runtime);
    EXPECT_TRUE(contains(e.what(), "workspace")) << e.what();
  }
  const Tensor host_x(p.input, p.layout);
  try {
    make("cudnn:implicit_gemm")->forward(ConvCall{p, exec}, host_x, w, y);
    ADD_FAILURE() << "no error for a host tensor";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::runtime);
    EXPECT_TRUE(contains(e.what(), "device memory")) << e.what();
  }
}

}  // namespace
}  // namespace tunescope::cuda
