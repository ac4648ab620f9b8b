// `--backend cuda` / `--backend auto` at the CLI: without a usable device, cuda is a usage
// error (exit 2) carrying the driver's reason and auto trains on cpu; with one, a short
// lenet5 run trains on the device with the backend's default conv algorithm.
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

constexpr const char* kShortRun =
    "--data fake --fake-count 64 --batch 16 --threads 1 --test-limit 16 --epochs 1";

std::string cuda_unavailable() {
#ifdef TUNESCOPE_HAVE_CUDA
  return tunescope::cuda::cuda_unavailable_reason();
#else
  return "this build has no CUDA backend";
#endif
}

TEST(CudaBackendCli, CudaWithoutADeviceExitsTwoWithTheDriversReason) {
  const std::string reason = cuda_unavailable();
  if (reason.empty()) GTEST_SKIP() << "a CUDA device is present";
  const Result r = run_cli(std::string("train --backend cuda ") + kShortRun);
  EXPECT_EQ(r.exit_code, 2) << r.output;
#ifdef TUNESCOPE_HAVE_CUDA
  EXPECT_TRUE(has(r, reason)) << r.output;
  EXPECT_TRUE(has(r, "no CUDA device: ")) << r.output;
#else
  EXPECT_TRUE(has(r, "unknown backend 'cuda'")) << r.output;
#endif
}

TEST(CudaBackendCli, AutoTrainsOnCpuWithoutADevice) {
  if (cuda_unavailable().empty()) GTEST_SKIP() << "a CUDA device is present: auto picks cuda";
  const Result r = run_cli(std::string("train --backend auto ") + kShortRun);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "conv direct")) << r.output;  // the cpu backend's default algorithm
}

#ifdef TUNESCOPE_HAVE_CUDA
TEST(CudaBackendCli, CudaTrainsWithCudnnImplicitGemmByDefault) {
  if (const std::string reason = cuda_unavailable(); !reason.empty()) GTEST_SKIP() << reason;
  const Result r = run_cli(std::string("train --backend cuda ") + kShortRun);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "conv cudnn:implicit_gemm")) << r.output;
}
#endif

}  // namespace
