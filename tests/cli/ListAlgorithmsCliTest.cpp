// `tunescope list-algorithms --backend NAME`: one backend's algorithms, an unknown name
// as a usage error, and (in CUDA builds) the cuDNN algorithms listed with the reason the
// cuda backend cannot start when there is no device.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/RunCli.h"

#ifdef TUNESCOPE_HAVE_CUDA
#include "kernels/cuda/CudaDevice.h"
#endif

namespace {

using tunescope::test_support::run_cli;
using Result = tunescope::test_support::CliResult;
using tunescope::test_support::has;

TEST(ListAlgorithmsCli, BackendOptionListsThatBackendOnly) {
  const Result r = run_cli("list-algorithms --backend cpu");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "backend cpu:")) << r.output;
  EXPECT_TRUE(has(r, "  conv direct")) << r.output;
  EXPECT_FALSE(has(r, "backend cuda")) << r.output;
}

TEST(ListAlgorithmsCli, UnknownBackendIsAUsageErrorListingTheKnownOnes) {
  const Result r = run_cli("list-algorithms --backend tpu");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "'tpu'")) << r.output;
  EXPECT_TRUE(has(r, "known: cpu")) << r.output;
}

#ifdef TUNESCOPE_HAVE_CUDA
TEST(ListAlgorithmsCli, CudaListsTheCudnnAlgorithmsAndWhyItCannotStart) {
  const Result r = run_cli("list-algorithms --backend cuda");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(has(r, "backend cpu")) << r.output;
  for (const char* name :
       {"backend cuda:", "  conv cudnn:implicit_gemm", "  conv cudnn:implicit_precomp_gemm",
        "  conv cudnn:gemm", "  conv cudnn:direct", "  conv cudnn:fft", "  conv cudnn:fft_tiling",
        "  conv cudnn:winograd", "  conv cudnn:winograd_nonfused", "  conv cudnn:find",
        "  conv fft-cufft", "  conv fft-own"})
    EXPECT_TRUE(has(r, name)) << name << " missing in\n" << r.output;
  if (const std::string reason = tunescope::cuda::cuda_unavailable_reason(); !reason.empty()) {
    EXPECT_TRUE(has(r, "backend cuda: unavailable: " + reason)) << r.output;
  }
}
#endif

}  // namespace
