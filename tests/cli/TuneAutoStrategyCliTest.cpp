// `tunescope tune` without --strategy runs `auto` on a tiny space: it prints the
// strategy it chose with every strategy's estimate, and the same choice and reason are
// in the tuned config's `measured` block, in the results DB, and in `report`'s output
// (which opens the DB read-only and leaves no WAL files).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/RunCli.h"

namespace {

namespace fs = std::filesystem;
using tunescope::test_support::run_cli;

TEST(TuneAutoStrategyCli, TheChoiceAndItsReasonReachConfigDbAndReport) {
  const fs::path dir = fs::temp_directory_path() / "tunescope-tune-auto-cli";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = (dir / "results.sqlite").string(), out = (dir / "tuned.json").string();

  const auto tune = run_cli(
      "tune --model lenet5 --data fake --fake-count 64 --test-limit 16 --batch 8 --layouts nchw "
      "--algorithms direct,gemm --steps 2 --warmup 0 --db " +
      db + " -o " + out);
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_NE(tune.output.find("strategy auto\n"), std::string::npos)
      << tune.output;  // the header: as requested
  std::smatch chosen;
  const std::regex line(R"(\nstrategy: (exhaustive|per-layer|halving) \((auto: [^\n]*)\)\n)");
  ASSERT_TRUE(std::regex_search(tune.output, chosen, line)) << tune.output;
  const std::string strategy = chosen[1], reason = chosen[2];
  for (const char* estimate : {"exhaustive ", "per-layer ", "halving "})
    EXPECT_NE(reason.find(estimate), std::string::npos) << reason;

  std::ifstream config_file(out);
  const nlohmann::json config = nlohmann::json::parse(config_file);
  EXPECT_EQ(config.at("measured").at("strategy"), strategy);
  EXPECT_EQ(config.at("measured").at("strategy_reason"), reason);

  // The tune closed the DB (SQLite folds its WAL back in); report reads it without
  // leaving -wal or -shm files beside it.
  auto no_wal_files = [&] { return !fs::exists(db + "-wal") && !fs::exists(db + "-shm"); };
  EXPECT_TRUE(no_wal_files());
  const auto report = run_cli("report " + db);
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_TRUE(no_wal_files());
  EXPECT_NE(report.output.find("strategy: " + strategy + " (" + reason + ")\n"), std::string::npos)
      << report.output;

  // train --config accepts the config with the new key.
  const auto train =
      run_cli("train --config " + out + " --data fake --fake-count 64 --test-limit 16 --epochs 1");
  EXPECT_EQ(train.exit_code, 0) << train.output;
  fs::remove_all(dir);
}

}  // namespace
