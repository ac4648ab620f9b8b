// The cuda backend's fft-cufft and fft-own convolutions (FftConvolutionCuda with cuFFT and
// with our CUDA FFT). Without a device: registration and names, transform sizes, precise
// reasons (no device, fft-own's 128-point limit, invalid problems), no workspace, argument
// errors. With a device (the match with the CPU `direct` on every layer shape and layout
// is tests/kernels/backends, for every backend's algorithms): a batch split into
// one-image chunks (backward filter sums the chunks' spectra); the saved spectra of the
// fft_workspace=cache policy; workspace and host-tensor errors.
//
// Stated error bound, max |fft - direct| / max |direct|: 2e-3, as for cudnn:fft
// (ConvCudnnTest.cpp): a float FFT adds rounding of order epsilon x log2(transform size)
// relative to the largest value, summed over up to 128 channels in the per-bin product;
// the CPU fft-* algorithms meet 1e-3, the margin covers cuFFT's and cuBLAS's summation order.
#include "kernels/cuda/FftConvolutionCuda.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <map>

#include "CudaConvTestSupport.h"
#include "CudaTestSupport.h"
#include "core/base/AlignedBuffer.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "kernels/cuda/CudaDevice.h"
#include "kernels/cuda/OwnFftCudaTransform.h"
#include "tests/kernels/cpu/ConvTestSupport.h"

namespace tunescope::cuda {
namespace {

using conv_test::make_problem;
using conv_test::NamedProblem;
using conv_test::with_layout;
using conv_test_cuda::device_pass;
using conv_test_cuda::lane_stream;
using conv_test_cuda::reference_for;

constexpr double kFftConvTolerance = 2e-3;
const std::vector<std::string> kNames = {"fft-cufft", "fft-own"};

std::unique_ptr<ConvAlgorithm> make(const std::string& name) {
  return Registry::instance().make_conv_algorithm("cuda", name);
}

ConvProblem resnet_3x3(Layout layout) {
  return with_layout(make_problem(4, 16, 32, 32, 16, 3, 3, 1, 1, 1, 1), layout);
}

// ---- without a device ----------------------------------------------------------------

TEST(FftConvolutionCuda, BothAreCudaAlgorithmsUnderTheirNames) {
  const std::vector<std::string> cuda = Registry::instance().conv_algorithms("cuda");
  for (const std::string& name : kNames) {
    EXPECT_NE(std::find(cuda.begin(), cuda.end(), name), cuda.end()) << name;
    EXPECT_EQ(make(name)->name(), name);
  }
}

TEST(FftConvolutionCuda, TransformSizesAreEachTransformsGoodSizes) {
  const auto cufft_algo = make("fft-cufft"), own_algo = make("fft-own");
  const auto& cufft = dynamic_cast<const FftConvolutionCuda&>(*cufft_algo);
  const auto& own = dynamic_cast<const FftConvolutionCuda&>(*own_algo);
  // lenet5 conv1: 32x32 unpadded, a power of two for both.
  const ConvProblem lenet = make_problem(4, 1, 32, 32, 6, 5, 5, 1, 1, 0, 0);
  EXPECT_EQ(cufft.transform_shape(lenet).rows, 32);
  EXPECT_EQ(own.transform_shape(lenet).cols, 32);
  // resnet 32x32 with pad 1 = 34: cuFFT takes 2-3-5-7 lengths (35), ours even 2-3-5 (36).
  const ConvProblem resnet = resnet_3x3(Layout::NCHW);
  EXPECT_EQ(cufft.transform_shape(resnet).rows, 35);
  EXPECT_EQ(own.transform_shape(resnet).rows, 36);
  EXPECT_EQ(own.transform_shape(resnet).cols, 36);
  // A 1x1 input with a 1x1 filter: ours transforms 1 point, cuFFT gets at least 2.
  const ConvProblem single = make_problem(2, 3, 1, 1, 4, 1, 1, 1, 1, 0, 0);
  EXPECT_EQ(own.transform_shape(single).rows, 1);
  EXPECT_EQ(cufft.transform_shape(single).rows, 2);
}

TEST(FftConvolutionCuda, WithoutADeviceBothSayWhyAndNeedNoWorkspace) {
  if (cuda_unavailable_reason().empty()) GTEST_SKIP() << "a CUDA device is present";
  for (Layout layout : {Layout::NCHW, Layout::NHWC})
    for (const std::string& name : kNames) {
      const ConvProblem p = resnet_3x3(layout);
      const auto algo = make(name);
      std::string reason;
      EXPECT_NO_THROW(reason = algo->unsupported_reason(p));
      EXPECT_TRUE(contains(reason, "no CUDA device")) << name << ": " << reason;
      EXPECT_EQ(algo->workspace_bytes(p), 0u) << name;
      EXPECT_EQ(algo->saved_bytes(p), 0u) << name;
    }
}

TEST(FftConvolutionCuda, FftOwnRefusesTransformsBeyond128PointsWhateverTheDevice) {
  // 127 + 2 x 1 = 129 pads to 144 > 128; the other side stays within the limit.
  const ConvProblem tall = make_problem(1, 2, 127, 20, 3, 3, 3, 1, 1, 1, 1);
  const std::string reason = make("fft-own")->unsupported_reason(tall);
  EXPECT_TRUE(contains(reason, "at most 128 points a side")) << reason;
  EXPECT_TRUE(contains(reason, "144x")) << reason;
  EXPECT_EQ(make("fft-own")->workspace_bytes(tall), 0u);
  // 126 + 2 = 128 is the limit itself; cuFFT has none.
  const ConvProblem edge = make_problem(1, 2, 126, 126, 3, 3, 3, 1, 1, 1, 1);
  EXPECT_FALSE(contains(make("fft-own")->unsupported_reason(edge), "128 points"));
  EXPECT_FALSE(contains(make("fft-cufft")->unsupported_reason(tall), "points a side"));
}

TEST(FftConvolutionCuda, UnsupportedReasonNamesAnInvalidProblem) {
  ConvProblem invalid = resnet_3x3(Layout::NCHW);
  invalid.kernel_w = 0;
  for (const std::string& name : kNames) {
    std::string reason;
    EXPECT_NO_THROW(reason = make(name)->unsupported_reason(invalid));
    EXPECT_TRUE(contains(reason, "kernel width")) << name << ": " << reason;
  }
}

TEST(FftConvolutionCuda, PassOnAnUnsupportedProblemThrowsUnsupportedNamingThePass) {
  const ConvProblem tall = make_problem(1, 2, 127, 20, 3, 3, 3, 1, 1, 1, 1);
  const Tensor x(tall.input, tall.layout), w(tall.filter(), tall.layout);
  Tensor y(tall.output(), tall.layout);
  ThreadPool pool(1);
  const ExecContext exec{pool};
  try {
    make("fft-own")->forward(ConvCall{tall, exec}, x, w, y);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_TRUE(contains(e.what(), "fft-own.fwd")) << e.what();
  }
}

TEST(FftConvolutionCuda, PassWithAMisshapenTensorIsARuntimeErrorNamingIt) {
  const ConvProblem p = resnet_3x3(Layout::NCHW);
  const Tensor x(p.input, p.layout), dy(p.output(), p.layout);
  Tensor dw({16, 16, 5, 5}, p.layout);
  ThreadPool pool(1);
  const ExecContext exec{pool};
  for (const std::string& name : kNames) {
    try {
      make(name)->backward_filter(ConvCall{p, exec}, x, dy, dw);
      ADD_FAILURE() << name << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::runtime);
      EXPECT_TRUE(contains(e.what(), "dw")) << e.what();
    }
  }
}

// ---- with a device -------------------------------------------------------------------

// The three passes of `algo` on `problem` against direct; prints each error for the GPU
// check's log.
void expect_matches_direct(ConvAlgorithm& algo, const ConvProblem& problem) {
  ASSERT_EQ(algo.unsupported_reason(problem), "") << algo.name() << " on " << problem.key();
  const conv_test_cuda::Reference& ref = reference_for(problem);
  MemorySpace& memory = CudaMemory::of_device(0);
  const Tensor x = to_memory(ref.host.x, memory), w = to_memory(ref.host.w, memory);
  const Tensor dy = to_memory(ref.host.dy, memory);
  const Tensor y =
      device_pass(algo, problem, problem.output(),
                  [&](const ConvCall& call, Tensor& out) { algo.forward(call, x, w, out); });
  const Tensor dx =
      device_pass(algo, problem, problem.input,
                  [&](const ConvCall& call, Tensor& out) { algo.backward_data(call, dy, w, out); });
  const Tensor dw = device_pass(
      algo, problem, problem.filter(),
      [&](const ConvCall& call, Tensor& out) { algo.backward_filter(call, x, dy, out); });
  const std::pair<const char*, double> errors[] = {
      {"fwd", conv_test::relative_error(y, ref.y)},
      {"bwd_data", conv_test::relative_error(dx, ref.dx)},
      {"bwd_filter", conv_test::relative_error(dw, ref.dw)}};
  for (const auto& [pass, error] : errors) {
    std::printf("%-10s %-44s %-10s error %.2e workspace %zu\n", algo.name().c_str(),
                problem.key().c_str(), pass, error, algo.workspace_bytes(problem));
    EXPECT_LE(error, kFftConvTolerance) << algo.name() << " " << pass << " on " << problem.key();
  }
}

TEST(FftConvolutionCudaDevice, OneImageChunksGiveTheSameResults) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  // A chunk budget of one byte: every image is a chunk of its own, and backward filter
  // accumulates the chunks' spectra (cuBLAS beta = 1).
  FftConvolutionCuda own("fft-own", std::make_unique<OwnFftCudaTransformFactory>(), 1);
  expect_matches_direct(
      own, with_layout(make_problem(5, 6, 14, 14, 16, 5, 5, 1, 1, 0, 0), Layout::NHWC));
  expect_matches_direct(own, make_problem(3, 16, 16, 16, 8, 3, 3, 2, 2, 1, 1));
}

TEST(FftConvolutionCudaDevice, SavedSpectraGiveTheSameResults) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  // The engine's fft_workspace=cache policy: one saved buffer for the three passes.
  const ConvProblem p =
      with_layout(make_problem(4, 16, 32, 32, 32, 3, 3, 2, 2, 1, 1), Layout::NHWC);
  const conv_test_cuda::Reference& ref = reference_for(p);
  MemorySpace& memory = CudaMemory::of_device(0);
  const Tensor x = to_memory(ref.host.x, memory), w = to_memory(ref.host.w, memory);
  const Tensor dy = to_memory(ref.host.dy, memory);
  ThreadPool pool(1);
  const ExecContext exec{pool, nullptr, 0, 0, NativeStream(lane_stream())};
  for (const std::string& name : kNames) {
    const auto algo = make(name);
    ASSERT_EQ(algo->unsupported_reason(p), "") << name;
    const size_t bytes = algo->workspace_bytes(p), saved_bytes = algo->saved_bytes(p);
    ASSERT_GT(saved_bytes, 0u) << name;
    AlignedBuffer workspace(bytes, memory), saved(saved_bytes, memory);
    const ConvCall call{p, exec, workspace.data(), bytes, saved.data(), saved_bytes};
    Tensor y(p.output(), p.layout, memory), dx(p.input, p.layout, memory),
        dw(p.filter(), p.layout, memory);
    algo->forward(call, x, w, y);
    algo->backward_data(call, dy, w, dx);
    algo->backward_filter(call, x, dy, dw);
    LaneStreams::finish(lane_stream());
    EXPECT_LE(conv_test::relative_error(to_host(y), ref.y), kFftConvTolerance)
        << name << " forward";
    EXPECT_LE(conv_test::relative_error(to_host(dx), ref.dx), kFftConvTolerance)
        << name << " backward data";
    EXPECT_LE(conv_test::relative_error(to_host(dw), ref.dw), kFftConvTolerance)
        << name << " backward filter";
  }
}

TEST(FftConvolutionCudaDevice, TooSmallAWorkspaceAndHostTensorsAreRuntimeErrors) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  const ConvProblem p = resnet_3x3(Layout::NCHW);
  MemorySpace& memory = CudaMemory::of_device(0);
  const Tensor x(p.input, p.layout, memory), w(p.filter(), p.layout, memory);
  Tensor y(p.output(), p.layout, memory);
  ThreadPool pool(1);
  const ExecContext exec{pool, nullptr, 0, 0, NativeStream(lane_stream())};
  for (const std::string& name : kNames) {
    const auto algo = make(name);
    const size_t needed = algo->workspace_bytes(p);
    ASSERT_GT(needed, 0u) << name;
    AlignedBuffer small(needed / 2, memory);
    try {
      algo->forward(ConvCall{p, exec, small.data(), small.bytes()}, x, w, y);
      ADD_FAILURE() << name << ": no error for a workspace of " << small.bytes() << " < " << needed;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::runtime);
      EXPECT_TRUE(contains(e.what(), "workspace")) << e.what();
    }
    const Tensor host_x(p.input, p.layout);
    AlignedBuffer workspace(needed, memory);
    try {
      algo->forward(ConvCall{p, exec, workspace.data(), needed}, host_x, w, y);
      ADD_FAILURE() << name << ": no error for a host tensor";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::runtime);
      EXPECT_TRUE(contains(e.what(), "device memory")) << e.what();
    }
  }
}

}  // namespace
}  // namespace tunescope::cuda
