// `--conv onednn:*` from the command line: a LeNet-5 epoch on fake data trains to the
// loss `direct` trains to, and DNNL_MAX_CPU_ISA=AVX2 forces oneDNN's AVX2 kernels (those
// of an AVX2-only machine such as AMD Zen 3), as the trace's kernel names show, with the
// same loss. Skips when oneDNN is not built in, and the AVX2 part where the CPU lacks AVX2.
//
// Tolerance: the printed train and test losses within 1e-3 relative of direct's (float
// sums in another order over one epoch of 2 steps; a wrong pass is off by O(1)).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "profiler/ChromeTraceReader.h"
#include "tests/cli/RunCli.h"
#include "tests/core/ScopedEnv.h"

namespace {

using tunescope::test_support::run_cli;

#ifdef TUNESCOPE_HAVE_ONEDNN
constexpr bool kOnednnBuilt = true;
#else
constexpr bool kOnednnBuilt = false;
#endif

const char* kTwoThreadLenet =
    "--model lenet5 --data fake --fake-count 32 --batch 16 --threads 2 --test-limit 16";

struct Losses {
  double train = -1, test = -1;
};

Losses train_losses(const std::string& conv) {
  const auto r = run_cli("train --epochs 1 --conv " + conv + " " + kTwoThreadLenet);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  if (!std::regex_search(r.output, m, std::regex(R"(train loss ([0-9.]+).*test loss ([0-9.]+))"))) {
    ADD_FAILURE() << "no losses in: " << r.output;
    return {};
  }
  return {std::stod(m[1]), std::stod(m[2])};
}

void expect_same_losses(const Losses& got, const Losses& reference, const std::string& what) {
  EXPECT_NEAR(got.train, reference.train, 1e-3 * reference.train) << what;
  EXPECT_NEAR(got.test, reference.test, 1e-3 * reference.test) << what;
}

TEST(OnednnCli, TrainsLikeDirect) {
  if (!kOnednnBuilt)
    GTEST_SKIP() << "built without oneDNN (TUNESCOPE_ONEDNN=OFF or libdnnl-dev missing)";
  const Losses direct = train_losses("direct");
  for (const char* conv : {"onednn:direct", "onednn:auto", "onednn:auto,conv1=gemm"})
    expect_same_losses(train_losses(conv), direct, conv);
}

TEST(OnednnCli, Avx2KernelsWhenTheIsaIsCapped) {
  if (!kOnednnBuilt)
    GTEST_SKIP() << "built without oneDNN (TUNESCOPE_ONEDNN=OFF or libdnnl-dev missing)";
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "this CPU has no AVX2";
  const Losses direct = train_losses("direct");
  const tunescope::test_support::ScopedEnv cap("DNNL_MAX_CPU_ISA", "AVX2");
  expect_same_losses(train_losses("onednn:auto"), direct,
                     "onednn:auto under DNNL_MAX_CPU_ISA=AVX2");

  const auto dir = std::filesystem::temp_directory_path() / "tunescope-onednn-avx2";
  std::filesystem::create_directories(dir);
  const auto trace_path = dir / "trace.json";
  const auto r = run_cli("profile --warmup 0 --steps 1 --conv onednn:auto --trace " +
                         trace_path.string() + " " + kTwoThreadLenet);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int computes = 0;
  for (const auto& a : tunescope::profiler::read_chrome_trace(trace_path).activities) {
    if (a.name.str().rfind("onednn:auto.", 0) != 0 ||
        a.name.str().find("reorder_") != std::string::npos ||
        a.name.str().find(".reduce") != std::string::npos)
      continue;
    ++computes;
    // The implementation in the name ("jit:avx2", "gemm:jit"...) never uses AVX-512.
    EXPECT_EQ(a.name.str().find("avx512"), std::string::npos) << a.name;
  }
  EXPECT_GT(computes, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
