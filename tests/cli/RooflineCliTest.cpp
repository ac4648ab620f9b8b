// The roofline in `profile` and `report`: without a cached probe the machine peak is "not
// measured" (never a figure) and the conv passes still show their GFLOP/s; after
// `tunescope machine --db` caches one, `report --db` shows it and each pass's share;
// `profile --db` measures and caches it once; bad probe options are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string>

#include "tests/cli/RunCli.h"
#include "tests/core/ScratchDir.h"

namespace {

using tunescope::test_support::run_cli;
using tunescope::test_support::ScratchDir;

const char* kLenetFakeRun =
    "--model lenet5 --data fake --fake-count 32 --batch 16 --threads 1 --test-limit 16";

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Whether one line holds every part, in order.
bool has_line(const std::string& text, std::initializer_list<const char*> parts) {
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t end = std::min(text.find('\n', begin), text.size());
    size_t at = begin;
    bool all = true;
    for (const char* part : parts) {
      at = text.find(part, at);
      if (at == std::string::npos || at >= end) {
        all = false;
        break;
      }
    }
    if (all) return true;
    begin = end + 1;
  }
  return false;
}

TEST(RooflineCli, ReportWithAndWithoutACachedProbe) {
  ScratchDir dir;
  const std::string trace = (dir.path() / "t.json").string();
  const std::string db = (dir.path() / "r.db").string();
  const auto profiled = run_cli(std::string("profile --warmup 0 --steps 1 --conv gemm --trace ") +
                                trace + " " + kLenetFakeRun);
  ASSERT_EQ(profiled.exit_code, 0) << profiled.output;
  EXPECT_TRUE(has(profiled.output, "machine peak: not measured (no --db")) << profiled.output;
  EXPECT_TRUE(has(profiled.output, "conv passes")) << profiled.output;
  EXPECT_TRUE(has_line(profiled.output, {"conv2", "gemm", "bwd_data"})) << profiled.output;

  const auto without = run_cli("report " + trace);
  ASSERT_EQ(without.exit_code, 0) << without.output;
  EXPECT_TRUE(has(without.output, "machine peak: not measured")) << without.output;
  EXPECT_FALSE(has(without.output, "% peak")) << without.output;
  EXPECT_FALSE(has(without.output, "conv_layers:"))
      << without.output;  // the metadata blob stays out of the header

  // A DB without this CPU's figures for one thread: said so, with the command that measures it.
  const auto measured_two = run_cli("machine --db " + db + " --threads 2 --seconds 0.2");
  ASSERT_EQ(measured_two.exit_code, 0) << measured_two.output;
  const auto other_threads = run_cli("report " + trace + " --db " + db);
  ASSERT_EQ(other_threads.exit_code, 0) << other_threads.output;
  EXPECT_TRUE(has(other_threads.output, "has none for")) << other_threads.output;
  EXPECT_TRUE(has(other_threads.output, "--threads 1")) << other_threads.output;

  const auto measured = run_cli("machine --db " + db + " --threads 1 --seconds 0.2");
  ASSERT_EQ(measured.exit_code, 0) << measured.output;
  EXPECT_TRUE(has(measured.output, "GFLOP/s measured")) << measured.output;
  EXPECT_TRUE(has(measured.output, "memory bandwidth")) << measured.output;
  const auto with = run_cli("report " + trace + " --db " + db);
  ASSERT_EQ(with.exit_code, 0) << with.output;
  EXPECT_TRUE(has(with.output, "GFLOP/s fp32 FMA")) << with.output;
  EXPECT_TRUE(has(with.output, "% peak")) << with.output;
  EXPECT_TRUE(has(with.output, "bound")) << with.output;

  // Cached: a second `machine` reads the DB instead of measuring.
  const auto cached = run_cli("machine --db " + db + " --threads 1");
  ASSERT_EQ(cached.exit_code, 0) << cached.output;
  EXPECT_FALSE(has(cached.output, "measuring")) << cached.output;
  const auto remeasured = run_cli("machine --db " + db + " --threads 1 --seconds 0.2 --remeasure");
  EXPECT_TRUE(has(remeasured.output, "measuring")) << remeasured.output;
}

TEST(RooflineCli, ProfileMeasuresOnceIntoItsDb) {
  ScratchDir dir;
  const std::string db = (dir.path() / "r.db").string();
  const auto first = run_cli("profile --warmup 0 --steps 1 --db " + db + " " + kLenetFakeRun);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(has(first.output, "measuring the machine's peaks")) << first.output;
  EXPECT_TRUE(has(first.output, "% peak")) << first.output;
  const auto second = run_cli("profile --warmup 0 --steps 1 --db " + db + " " + kLenetFakeRun);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_FALSE(has(second.output, "measuring")) << second.output;
  EXPECT_TRUE(has(second.output, "% peak")) << second.output;
}

TEST(RooflineCli, RefusesAbsurdProbeOptions) {
  for (const char* bad : {"--threads 5000", "--threads -1", "--seconds 0", "--seconds 1e6"}) {
    const auto r = run_cli(std::string("machine ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_TRUE(has(r.output, std::string(bad).substr(0, std::string(bad).find(' ')))) << r.output;
  }
  const auto missing = run_cli("report /proc/no/such.json --db /proc/no/such.db");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
}

}  // namespace
