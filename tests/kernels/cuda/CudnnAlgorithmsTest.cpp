// cuDNN algorithm names and families, and the descriptor parameters of a ConvProblem in
// NCHW and NHWC (no device); availability and workspace sizes of a resnet layer (device).
#include "kernels/cuda/CudnnAlgorithms.h"

#include <gtest/gtest.h>

#include <cctype>
#include <set>

#include "CudaTestSupport.h"
#include "core/base/Error.h"

namespace tunescope::cuda {
namespace {

// The 3x3 64->64 layer of a resnet18 stage on 32x32 inputs, batch 128.
ConvProblem resnet_layer(Layout layout) {
  ConvProblem p;
  p.input = {128, 64, 32, 32};
  p.out_channels = 64;
  p.kernel_h = p.kernel_w = 3;
  p.pad_h = p.pad_w = 1;
  p.layout = layout;
  return p;
}

// Its stride-2 downsampling neighbour: 64 -> 128 channels, 32x32 -> 16x16.
ConvProblem resnet_downsample(Layout layout) {
  ConvProblem p = resnet_layer(layout);
  p.out_channels = 128;
  p.stride_h = p.stride_w = 2;
  return p;
}

TEST(CudnnAlgorithms, EveryEnumValueOfEachPassHasAName) {
  EXPECT_EQ(cudnn_algorithms(CudnnPass::forward).size(), size_t{CUDNN_CONVOLUTION_FWD_ALGO_COUNT});
  EXPECT_EQ(cudnn_algorithms(CudnnPass::backward_data).size(),
            size_t{CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT});
  EXPECT_EQ(cudnn_algorithms(CudnnPass::backward_filter).size(),
            size_t{CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT});
  for (CudnnPass pass :
       {CudnnPass::forward, CudnnPass::backward_data, CudnnPass::backward_filter}) {
    std::set<std::string> names;
    for (const CudnnAlgorithmInfo& info : cudnn_algorithms(pass)) {
      EXPECT_EQ(info.pass, pass);
      EXPECT_TRUE(names.insert(info.name).second) << "duplicate " << info.name;
      for (char c : std::string(info.name))
        EXPECT_TRUE(std::islower(c) || std::isdigit(c) || c == '_') << info.name;
    }
  }
  EXPECT_EQ(cudnn_algorithm(CudnnPass::forward, "fft_tiling").value,
            CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING);
  EXPECT_EQ(cudnn_algorithm(CudnnPass::forward, "winograd_nonfused").value,
            CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED);
  EXPECT_EQ(cudnn_algorithm(CudnnPass::backward_filter, "algo_3").value,
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3);
  EXPECT_FALSE(cudnn_algorithm(CudnnPass::backward_data, "algo_0").deterministic);
  EXPECT_FALSE(cudnn_algorithm(CudnnPass::backward_filter, "winograd").implemented);
  EXPECT_FALSE(cudnn_algorithm(CudnnPass::forward, "direct").implemented);
  EXPECT_TRUE(cudnn_algorithm(CudnnPass::forward, "implicit_gemm").implemented);
}

TEST(CudnnAlgorithms, UnknownNameIsAUsageErrorListingTheKnownOnes) {
  try {
    cudnn_algorithm(CudnnPass::backward_data, "implicit_gemm");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("winograd_nonfused"), std::string::npos) << e.what();
  }
}

TEST(CudnnAlgorithms, FamiliesPairForwardWithSameNamedBackwardOrAlgo1) {
  const auto families = cudnn_algorithm_families();
  ASSERT_EQ(families.size(), size_t{CUDNN_CONVOLUTION_FWD_ALGO_COUNT});
  auto family = [&](const std::string& name) {
    for (const auto& f : families)
      if (f.registered_name == name) return f;
    ADD_FAILURE() << "no family " << name;
    return families.front();
  };
  EXPECT_EQ(family("cudnn:implicit_gemm").forward, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);
  EXPECT_EQ(family("cudnn:implicit_gemm").backward_data, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
  EXPECT_EQ(family("cudnn:implicit_gemm").backward_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
  EXPECT_EQ(family("cudnn:fft").backward_data, CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT);
  EXPECT_EQ(family("cudnn:fft").backward_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT);
  EXPECT_EQ(family("cudnn:fft_tiling").backward_filter,
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING);
  // Backward-filter Winograd is declared but not implemented: the family falls back.
  EXPECT_EQ(family("cudnn:winograd").backward_data, CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD);
  EXPECT_EQ(family("cudnn:winograd").backward_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
  EXPECT_EQ(family("cudnn:winograd_nonfused").backward_filter,
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED);
}

TEST(CudnnConvParams, NchwProblemMapsToKcrsFilterAndCrossCorrelation) {
  const CudnnConvParams p = cudnn_conv_params(resnet_downsample(Layout::NCHW));
  EXPECT_EQ(p.x.format, CUDNN_TENSOR_NCHW);
  EXPECT_EQ(p.w.format, CUDNN_TENSOR_NCHW);
  EXPECT_EQ(p.y.format, CUDNN_TENSOR_NCHW);
  EXPECT_EQ((std::array{p.x.n, p.x.c, p.x.h, p.x.w}), (std::array{128, 64, 32, 32}));
  EXPECT_EQ((std::array{p.w.k, p.w.c, p.w.r, p.w.s}), (std::array{128, 64, 3, 3}));
  EXPECT_EQ((std::array{p.y.n, p.y.c, p.y.h, p.y.w}), (std::array{128, 128, 16, 16}));
  EXPECT_EQ((std::array{p.conv.pad_h, p.conv.pad_w, p.conv.stride_h, p.conv.stride_w}),
            (std::array{1, 1, 2, 2}));
  EXPECT_EQ(p.conv.dilation_h, 1);
  EXPECT_EQ(p.conv.mode, CUDNN_CROSS_CORRELATION);
  EXPECT_EQ(p.conv.compute_type, CUDNN_DATA_FLOAT);
  EXPECT_EQ(p.conv.math, CUDNN_FMA_MATH);
}

TEST(CudnnConvParams, NhwcProblemUsesNhwcForTensorsAndKrscFilter) {
  ConvProblem problem = resnet_layer(Layout::NHWC);
  problem.kernel_w = 5;
  problem.pad_w = 2;
  const CudnnConvParams p = cudnn_conv_params(problem);
  EXPECT_EQ(p.x.format, CUDNN_TENSOR_NHWC);
  EXPECT_EQ(p.w.format, CUDNN_TENSOR_NHWC);
  EXPECT_EQ(p.y.format, CUDNN_TENSOR_NHWC);
  // Dimensions stay logical; the format says how they are stored.
  EXPECT_EQ((std::array{p.w.k, p.w.c, p.w.r, p.w.s}), (std::array{64, 64, 3, 5}));
  EXPECT_EQ((std::array{p.conv.pad_h, p.conv.pad_w}), (std::array{1, 2}));
  EXPECT_EQ((std::array{p.y.h, p.y.w}), (std::array{32, 32}));
}

TEST(CudnnConvParams, RejectsInvalidAndOversizedProblems) {
  ConvProblem bad = resnet_layer(Layout::NCHW);
  bad.kernel_h = 0;
  EXPECT_THROW(cudnn_conv_params(bad), Error);
  ConvProblem huge = resnet_layer(Layout::NCHW);
  huge.input.n = int64_t{1} << 33;
  try {
    cudnn_conv_params(huge);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_NE(std::string(e.what()).find("does not fit"), std::string::npos) << e.what();
  }
}

TEST(CudnnConvDescriptors, CudnnAgreesWithTheOutputShape) {
  // Descriptors are host objects, but cuDNN may still want a driver to create them.
  for (const ConvProblem& problem : {resnet_layer(Layout::NCHW), resnet_downsample(Layout::NHWC)}) {
    try {
      const CudnnConvDescriptors descriptors(problem);
      EXPECT_EQ(descriptors.cudnn_output_shape(), problem.output()) << problem.key();
    } catch (const Error& e) {
      const std::string reason = cuda_unavailable_reason();
      if (reason.empty()) throw;
      GTEST_SKIP() << "cuDNN descriptors need a device here: " << e.what() << " (" << reason << ")";
    }
  }
}

TEST(CudnnWorkspace, ResnetLayerListsAlgorithmsAndWorkspaces) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  const CudnnHandle handle;
  for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
    const ConvProblem problem = resnet_layer(layout);
    const CudnnConvDescriptors descriptors(problem);
    for (CudnnPass pass :
         {CudnnPass::forward, CudnnPass::backward_data, CudnnPass::backward_filter}) {
      const auto rows = query_cudnn_algorithms(handle.get(), descriptors, pass);
      ASSERT_EQ(rows.size(), cudnn_algorithms(pass).size());
      int supported = 0;
      for (const auto& row : rows) {
        std::printf("%s %s %-22s %s %zu bytes %s\n", problem.key().c_str(), to_string(pass),
                    row.algorithm.name, row.supported ? "ok " : "no ", row.workspace_bytes,
                    row.reason.c_str());
        if (row.supported)
          ++supported;
        else
          EXPECT_FALSE(row.reason.empty());
      }
      EXPECT_GE(supported, 1) << problem.key() << " " << to_string(pass);
    }
    // Implicit GEMM is cuDNN's universal forward algorithm and needs no workspace.
    const auto forward = query_cudnn_algorithms(handle.get(), descriptors, CudnnPass::forward);
    EXPECT_TRUE(forward[CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM].supported) << problem.key();
    EXPECT_EQ(forward[CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM].workspace_bytes, 0u)
        << problem.key();
  }
}

}  // namespace
}  // namespace tunescope::cuda
