// The fuse knob from the command line: on by default (the fused kernels in the trace),
// `--fuse=off` runs the separate batch-norm, add and ReLU kernels, and a value that is
// neither is a usage error naming the flag.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "tests/cli/RunCli.h"

#include "profiler/ChromeTraceReader.h"

namespace {

using tunescope::test_support::run_cli;

std::map<std::string, int> kernel_calls(const std::string& fuse_flag) {
  const auto path =
      std::filesystem::temp_directory_path() / ("tunescope-cli-fuse" + fuse_flag + ".json");
  const auto r = run_cli(
      "profile --model resnet18-small --data fake --fake-count 16 --batch 8 --threads 1 "
      "--test-limit 1 --warmup 0 --steps 1 --trace " +
      path.string() + " " + fuse_flag);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::map<std::string, int> calls;
  for (const auto& a : tunescope::profiler::read_chrome_trace(path).activities) ++calls[a.name];
  std::filesystem::remove(path);
  return calls;
}

TEST(FuseCli, OnByDefaultAndOffRunsTheSeparateKernels) {
  auto fused = kernel_calls("");
  EXPECT_EQ(fused["bn_relu.fwd"], 9);
  EXPECT_EQ(fused["bn_add_relu.bwd"], 8);
  EXPECT_EQ(fused["relu.bwd"], 0);
  auto unfused = kernel_calls("--fuse=off");
  EXPECT_EQ(unfused["bn_relu.fwd"], 0);
  EXPECT_EQ(unfused["relu.bwd"], 17);
  EXPECT_EQ(unfused["add"], 8);
}

TEST(FuseCli, UnknownValueIsAUsageErrorNamingTheFlag) {
  const auto r = run_cli(
      "profile --data fake --fake-count 16 --batch 8 --test-limit 1 --steps 1 --fuse=maybe");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--fuse: 'maybe' is not a value (off, on)"), std::string::npos)
      << r.output;
}

}  // namespace
