// `--fft-tile` and `--fft-tile-list` on the command line and `fft_tile` in a config file:
// a bad value is a usage or input error naming the option or the file and key, a tile
// that does not exceed a layer's kernel stops the run naming the layer, and a tune on a
// tiny space where the tile is a knob measures and records every tiling of the FFT
// config (ranked table, results DB, `report` of the DB) and the tuned config keeps it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "profiler/ChromeTraceReader.h"
#include "tests/cli/RunCli.h"
#include "tests/core/ScratchDir.h"

namespace {

using tunescope::test_support::kSmallFakeTrain;
using tunescope::test_support::kSmallFakeTune;

using tunescope::test_support::run_cli;
using tunescope::test_support::ScratchDir;

TEST(FftTileCli, BadTileIsAUsageErrorNamingTheOption) {
  const auto r = run_cli(std::string("train --conv fft-own --fft-tile 18 ") + kSmallFakeTrain);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--fft-tile: '18' is not a value (auto, off, or a power of two"),
            std::string::npos)
      << r.output;
  const auto list = run_cli(std::string("tune --fft-tile-list off,tiny ") + kSmallFakeTune +
                            " -o /nonexistent/x.json");
  EXPECT_EQ(list.exit_code, 2) << list.output;
  EXPECT_NE(list.output.find("--fft-tile-list: 'tiny' is not a value"), std::string::npos)
      << list.output;
}

TEST(FftTileCli, TileNotLargerThanTheKernelNamesTheLayer) {
  const auto r =
      run_cli(std::string("train --conv fft-own --fft-tile 4 --epochs 1 ") + kSmallFakeTrain);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("layer conv1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fft_tile 4 does not exceed the 5x5 kernel"), std::string::npos)
      << r.output;
}

TEST(FftTileCli, ConfigKeyIsCheckedAndAppliedAndTheFlagWins) {
  const ScratchDir dir;
  nlohmann::json config = {{"schema", "tunescope.config/1"},
                           {"model", "lenet5"},
                           {"batch", 16},
                           {"layout", "nchw"},
                           {"conv", {{"default", "fft-own"}}},
                           {"threads", 1},
                           {"fft_tile", "12"}};
  const auto path = dir / "tile.json";
  std::ofstream(path) << config.dump();
  const auto bad =
      run_cli("train --config " + path.string() + " --data fake --fake-count 32 --test-limit 16");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find(path.string()), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("key 'fft_tile': '12' is not a value"), std::string::npos)
      << bad.output;

  config["fft_tile"] = "4";
  std::ofstream(path) << config.dump();
  const auto profile = [&](const std::string& extra) {
    const auto trace = dir / "trace.json";
    return run_cli("profile --config " + path.string() + " --warmup 0 --steps 1 --trace " +
                   trace.string() + " --data fake --fake-count 32 " + extra);
  };
  // The file's 4 does not exceed the 5x5 kernels; --fft-tile 16 given explicitly beats it.
  const auto refused = profile("");
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_NE(refused.output.find("fft_tile 4 does not exceed"), std::string::npos) << refused.output;
  const auto flag_wins = profile("--fft-tile 16");
  ASSERT_EQ(flag_wins.exit_code, 0) << flag_wins.output;
  const auto trace = tunescope::profiler::read_chrome_trace(dir / "trace.json");
  EXPECT_EQ(nlohmann::json::parse(trace.metadata.config).at("fft_tile"), "16")
      << trace.metadata.config;
}

TEST(FftTileCli, TuneMeasuresAndRecordsEveryTilingOfFftConfigsOnly) {
  const ScratchDir dir;
  const std::string db = (dir / "results.sqlite").string();
  const auto r =
      run_cli(std::string("tune --strategy exhaustive --layouts nchw --algorithms direct,fft-own "
                          "--fft-tile-list off,8,4 --steps 1 --warmup 0 ") +
              kSmallFakeTune + " --db " + db + " -o " + (dir / "tuned.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // fft-own untiled and in 8x8 tiles, direct once (the tile changes nothing there); 4 is
  // skipped: LeNet-5's 5x5 kernels do not fit a 4x4 transform.
  EXPECT_NE(r.output.find("| nchw conv=fft-own threads=1 fft_tile=off"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("| nchw conv=fft-own threads=1 fft_tile=8"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("conv=direct threads=1 fft_tile="), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fft_tile 4 does not exceed the 5x5 kernel"), std::string::npos)
      << r.output;
  const auto report = run_cli("report " + db);
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("conv=fft-own threads=1 fft_tile=off"), std::string::npos)
      << report.output;
  EXPECT_NE(report.output.find("conv=fft-own threads=1 fft_tile=8"), std::string::npos)
      << report.output;
  // The tuned config carries whichever tiling won (auto never: it was not in the list).
  std::ifstream tuned(dir / "tuned.json");
  const auto json = nlohmann::json::parse(tuned);
  // An algorithm's knob is written only when set otherwise than its default.
  if (json.at("conv").at("default") == "fft-own")
    EXPECT_NE(json.at("fft_tile"), "auto") << json.dump();
  else
    EXPECT_FALSE(json.contains("fft_tile")) << json.dump();
}

}  // namespace
