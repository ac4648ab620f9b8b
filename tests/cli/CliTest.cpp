// Runs the `tunescope` binary as a user would: exit codes, messages naming the bad
// value, and a profile run whose trace file reads back.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "tests/cli/RunCli.h"

#include "profiler/ChromeTraceReader.h"

namespace {

using tunescope::test_support::run_cli;
using Result = tunescope::test_support::CliResult;

const char* kFakeTrain64 = "--data fake --fake-count 64 --batch 16 --threads 1 --test-limit 16";

TEST(Cli, ListAlgorithmsNamesEveryCpuAlgorithm) {
  const Result r = run_cli("list-algorithms");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"backend cpu", "direct", "gemm", "fft-fftw", "winograd"})
    EXPECT_NE(r.output.find(name), std::string::npos) << name << " missing in\n" << r.output;
}

TEST(Cli, UsageErrorsExitTwoAndNameTheValue) {
  struct Case {
    std::string args;
    std::string expected;
  };
  const Case cases[] = {
      {"train --bogus", "--bogus"},
      {"train --layout nwhc", "nwhc"},
      {"train --model alexnet", "alexnet"},
      {"train --conv strassen " + std::string(kFakeTrain64), "strassen"},
      {"train --conv gemm,conv7=direct " + std::string(kFakeTrain64), "conv7"},
      {"train --epochs 0 " + std::string(kFakeTrain64), "--epochs"},
      {"train --batch -4", "--batch"},
      {"train --data /no/such/folder", "/no/such/folder"},
      {"profile --steps 0 " + std::string(kFakeTrain64), "--steps"},
      {"train --replicas 3 " + std::string(kFakeTrain64),
       "batch (--batch) 16 does not split into 3 replicas"},
      {"train --streams 0 " + std::string(kFakeTrain64), "--streams"},
      {"train --update-on gpu " + std::string(kFakeTrain64),
       "--update-on: 'gpu' is not a value (device, host)"},
      {"profile --update-on host " + std::string(kFakeTrain64),
       "backend cpu keeps its tensors in host memory"},
      // Core names the key, the CLI adds the flag that sets it.
      {"train --conv gemm,conv1 " + std::string(kFakeTrain64),
       "conv (--conv) 'gemm,conv1': expected LAYER=ALGORITHM"},
      {"train --lr 0 " + std::string(kFakeTrain64), "lr (--lr) must be > 0, got 0"},
      {"", "subcommand"},
  };
  for (const Case& c : cases) {
    const Result r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << c.args << "\n" << r.output;
  }
}

TEST(Cli, TrainPrintsThroughputAndAccuracy) {
  const Result r = run_cli("train --epochs 1 " + std::string(kFakeTrain64));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ex/s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("test loss"), std::string::npos) << r.output;
}

// winograd runs resnet18-small's 3x3 stride-1 layers (gemm the strided ones); on a layer
// it cannot run the error names the layer and why.
TEST(Cli, TrainAcceptsWinogradWhereItApplies) {
  const std::string strided =
      "s2b1.conv1=gemm,s3b1.conv1=gemm,s4b1.conv1=gemm,s2b1.proj=gemm,s3b1.proj=gemm,"
      "s4b1.proj=gemm";
  const Result r = run_cli(
      "train --model resnet18-small --epochs 1 --data fake --fake-count 16 --batch 8 "
      "--threads 1 --test-limit 8 --layout nhwc --conv winograd," +
      strided);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ex/s"), std::string::npos) << r.output;
  const Result lenet = run_cli("train --conv winograd " + std::string(kFakeTrain64));
  EXPECT_NE(lenet.exit_code, 0) << lenet.output;
  EXPECT_NE(lenet.output.find("layer conv1: algorithm 'winograd' does not support"),
            std::string::npos)
      << lenet.output;
  EXPECT_NE(lenet.output.find("winograd runs 3x3 filters only, not 5x5"), std::string::npos)
      << lenet.output;
}

TEST(Cli, ProfileWritesTraceThatReadsBack) {
  const auto path = std::filesystem::temp_directory_path() / "tunescope-cli-test-trace.json.gz";
  std::filesystem::remove(path);
  const Result r = run_cli("profile --warmup 1 --steps 2 --conv gemm --layout nhwc --trace " +
                           path.string() + " " + kFakeTrain64);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("gemm.fwd"), std::string::npos) << "kernel table lacks conv kernels:\n"
                                                          << r.output;
  const auto trace = tunescope::profiler::read_chrome_trace(path);
  std::set<std::string> passes;
  for (const auto& a : trace.activities)
    if (a.name.str().rfind("gemm.", 0) == 0)
      passes.insert(a.name.str().substr(0, a.name.str().find('.', 5)));
  EXPECT_EQ(passes, (std::set<std::string>{"gemm.fwd", "gemm.bwd_data", "gemm.bwd_filter"}));
  size_t steps = 0, conv1 = 0;
  for (const auto& range : trace.ranges) {
    steps += range.name == "train_step";
    conv1 += range.name == "conv1";
  }
  EXPECT_EQ(steps, 2u);
  EXPECT_EQ(conv1, 6u) << "conv1 forward, backward and update in each of 2 steps";
  EXPECT_EQ(trace.metadata.backend, "cpu");
  std::filesystem::remove(path);
}

TEST(Cli, ProfileWithStreamsAndAsyncUpdateTracesSeveralLanes) {
  const auto path = std::filesystem::temp_directory_path() / "tunescope-cli-test-lanes.json.gz";
  const Result r = run_cli("profile --warmup 1 --steps 2 --streams 2 --async-update --trace " +
                           path.string() + " " + kFakeTrain64);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("concurrency:"), std::string::npos) << r.output;
  std::set<int> lanes;
  for (const auto& a : tunescope::profiler::read_chrome_trace(path).activities)
    lanes.insert(a.stream);
  EXPECT_EQ(lanes, (std::set<int>{0, 1}));
  std::filesystem::remove(path);
}

TEST(Cli, UnwritableTraceIsAnInputError) {
  const Result r = run_cli("profile --warmup 0 --steps 1 --trace /proc/no/such/dir/t.json " +
                           std::string(kFakeTrain64));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("/proc/no/such/dir/t.json"), std::string::npos) << r.output;
}

}  // namespace

namespace {

// "auto" must be resolved before the tuner looks algorithms up by backend name.
TEST(Cli, AutoBackendWorksForTrainAndTune) {
  EXPECT_EQ(run_cli("train --backend auto --epochs 1 " + std::string(kFakeTrain64)).exit_code, 0);
  const auto config = std::filesystem::temp_directory_path() / "tunescope-cli-auto-backend.json";
  const Result tune =
      run_cli("tune --backend auto --algorithms direct --layouts nchw --steps 1 --warmup 0 -o " +
              config.string() + " --data fake --fake-count 64 --batch 16 --test-limit 16");
  EXPECT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_TRUE(std::filesystem::exists(config));
  std::filesystem::remove(config);
}

}  // namespace
