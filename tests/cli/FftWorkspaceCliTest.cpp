// `--fft-workspace` on the command line: a bad policy is a usage error naming it, and
// `profile` prints the conv memory of the policy and keeps it in the trace metadata,
// and `tune --fft-workspace-list` tries both policies on FFT configs only.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "profiler/ChromeTraceReader.h"
#include "tests/cli/RunCli.h"

namespace {

using tunescope::test_support::kSmallFakeTrain;
using tunescope::test_support::kSmallFakeTune;

using tunescope::test_support::run_cli;

TEST(FftWorkspaceCli, UnknownPolicyIsAUsageErrorNamingIt) {
  const auto r =
      run_cli(std::string("train --conv fft-own --fft-workspace keep ") + kSmallFakeTrain);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--fft-workspace: 'keep' is not a value (reuse, cache)"),
            std::string::npos)
      << r.output;
}

TEST(FftWorkspaceCli, ProfileReportsThePolicyMemoryInOutputAndTrace) {
  uint64_t peak[2] = {0, 0};
  int i = 0;
  for (const char* policy : {"reuse", "cache"}) {
    const auto path = std::filesystem::temp_directory_path() /
                      (std::string("tunescope-fft-workspace-") + policy + ".json");
    const auto r =
        run_cli(std::string("profile --warmup 0 --steps 1 --conv fft-own --fft-workspace ") +
                policy + " --trace " + path.string() + " " + kSmallFakeTrain);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(std::string("fft_workspace ") + policy + ")"), std::string::npos)
        << r.output;
    const auto trace = tunescope::profiler::read_chrome_trace(path);
    EXPECT_EQ(trace.metadata.extra.at("fft_workspace"), policy);
    peak[i] = std::stoull(trace.metadata.extra.at("conv_memory_peak_bytes"));
    const uint64_t spectra = std::stoull(trace.metadata.extra.at("fft_cached_spectra_bytes"));
    EXPECT_EQ(spectra == 0, std::string(policy) == "reuse") << policy;
    EXPECT_EQ(peak[i], std::stoull(trace.metadata.extra.at("conv_workspace_bytes")) + spectra)
        << policy;
    std::filesystem::remove(path);
    ++i;
  }
  EXPECT_GT(peak[1], peak[0]);
}

TEST(FftWorkspaceCli, TuneTriesBothPoliciesOnFftConfigsOnly) {
  const auto dir = std::filesystem::temp_directory_path() / "tunescope-fft-workspace-tune";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto r =
      run_cli(std::string("tune --strategy exhaustive --layouts nchw --algorithms direct,fft-own "
                          "--fft-workspace-list reuse,cache --steps 1 --warmup 0 ") +
              kSmallFakeTune + " -o " + (dir / "tuned.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // fft-own with and without the cache; direct once (the policy changes nothing there).
  EXPECT_NE(r.output.find("3 trials"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| nchw conv=fft-own threads=1 fft_workspace=cache"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("conv=direct threads=1 fft_workspace=cache"), std::string::npos)
      << r.output;
  const auto bad = run_cli(std::string("tune --fft-workspace-list reuse,keep ") + kSmallFakeTune +
                           " -o " + (dir / "x.json").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--fft-workspace-list"), std::string::npos) << bad.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.json"));
  std::filesystem::remove_all(dir);
}

}  // namespace
