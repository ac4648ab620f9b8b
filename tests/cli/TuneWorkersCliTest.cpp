// Workers as a tuning knob, end to end: `tune --workers-list 1,2` measures the 2-worker
// candidate as 2 processes under the mpirun found at build time, beside the one-process
// candidate, records both with their workers, and `train --config` of a 2-worker config
// runs only as 2 ranks, saying how otherwise. Without MPI in the build a workers value
// above 1 is refused, saying why.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli/RunCli.h"
#include "tests/cli/TestFolder.h"

namespace tunescope::test_support {
namespace {

constexpr const char* kTiny =
    "--model lenet5 --data fake --fake-count 256 --test-limit 32 --batch 32";

std::string tune_args(const std::filesystem::path& dir) {
  return std::string("tune ") + kTiny +
         " --layouts nchw --algorithms direct --threads-list 1 --workers-list 1,2 --strategy "
         "exhaustive --steps 3 --max-timing-seconds 1 --warmup 1 --db " +
         (dir / "tune.db").string() + " -o " + (dir / "tuned.json").string();
}

#ifdef TUNESCOPE_MPIEXEC
size_t count_of(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST(TuneWorkersCli, TwoWorkersAreMeasuredAsTwoProcessesBesideOneAndRecorded) {
  ScratchDir dir;
  const CliResult tune =
      run_command(std::string("timeout 600 ") + TUNESCOPE_CLI_PATH + " " + tune_args(dir.path()));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_NE(tune.output.find("workers=2"), std::string::npos) << tune.output;
  // Both candidates ok in the stored ranking (report reads the DB back), each once.
  const CliResult report = run_cli("report " + (dir.path() / "tune.db").string());
  ASSERT_EQ(report.exit_code, 0) << report.output;
  // One ranking row (the winner's line and verdict may name it again).
  size_t rows = 0;
  std::istringstream lines(report.output);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("| ") && line.find("threads=1 workers=2") != std::string::npos) ++rows;
  EXPECT_EQ(rows, 1u) << report.output;
  EXPECT_EQ(count_of(report.output, "| ok |"), 2u) << report.output;
}

TEST(TuneWorkersCli, AConfigOfTwoWorkersTrainsOnlyAsTwoRanks) {
  ScratchDir dir;
  const auto config = dir.path() / "two.json";
  std::ofstream(config) << R"({"schema": "tunescope.config/1", "model": "lenet5", "batch": 32,
    "conv": {"default": "direct"}, "layout": "nchw", "threads": 1, "workers": 2})";
  const std::string train = std::string("train --config ") + config.string() +
                            " --data fake --fake-count 128 --test-limit 32";
  const CliResult alone = run_cli(train);
  EXPECT_EQ(alone.exit_code, 2) << alone.output;
  EXPECT_NE(alone.output.find("mpirun -np 2"), std::string::npos) << alone.output;
  const CliResult ranks =
      run_command(std::string("timeout 600 ") + TUNESCOPE_MPIEXEC +
                  " --allow-run-as-root --oversubscribe -np 2 " + TUNESCOPE_CLI_PATH + " " + train);
  EXPECT_EQ(ranks.exit_code, 0) << ranks.output;
  EXPECT_NE(ranks.output.find("2 ranks"), std::string::npos) << ranks.output;
}
#else
TEST(TuneWorkersCli, WorkersAboveOneWithoutMpiAreRefusedSayingWhy) {
  ScratchDir dir;
  const CliResult tune = run_cli(tune_args(dir.path()));
  EXPECT_EQ(tune.exit_code, 2) << tune.output;
  EXPECT_NE(tune.output.find("built without MPI"), std::string::npos) << tune.output;
}
#endif

}  // namespace
}  // namespace tunescope::test_support
