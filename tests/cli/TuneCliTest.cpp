// `tunescope tune` as a user runs it: on tiny fake data it writes the tuned config, the
// results DB and both traces; `train --config` accepts that config; bad options and bad
// files exit 2 naming the culprit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli/RunCli.h"

namespace {

namespace fs = std::filesystem;

using tunescope::testing::run_cli;
using Result = tunescope::testing::CliResult;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kTinyData = "--model lenet5 --data fake --fake-count 64 --test-limit 16 --batch 8";

struct TuneDir {
  // One folder per test: CTest runs the tests of this file in parallel processes.
  fs::path dir = fs::temp_directory_path() /
                 (std::string("tunescope-tune-cli-") +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TuneDir() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~TuneDir() { fs::remove_all(dir); }
  std::string at(const std::string& name) const { return (dir / name).string(); }
};

TEST(TuneCli, WritesConfigDbAndTracesThatTrainAccepts) {
  const TuneDir d;
  const Result tune = run_cli("tune " + kTinyData + " --layouts nchw,nhwc --algorithms direct,gemm --threads-list 1 "
                          "--steps 2 --warmup 1 --db " + d.at("results.sqlite") + " -o " + d.at("tuned.json") +
                          " --trace-dir " + d.at("traces"));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_NE(tune.output.find("| 1 |"), std::string::npos) << tune.output;
  EXPECT_NE(tune.output.find("(best)"), std::string::npos) << tune.output;
  EXPECT_NE(tune.output.find("winner:"), std::string::npos) << tune.output;

  const std::string config = read(d.at("tuned.json"));
  EXPECT_NE(config.find("\"schema\": \"tunescope.config/1\""), std::string::npos) << config;
  EXPECT_NE(config.find("\"examples_per_second\""), std::string::npos) << config;
  EXPECT_EQ(read(d.at("results.sqlite")).rfind("SQLite format 3", 0), 0u);
  EXPECT_TRUE(fs::exists(d.at("traces/best.json")));
  EXPECT_TRUE(fs::exists(d.at("traces/baseline.json")));

  const Result train = run_cli("train --config " + d.at("tuned.json") +
                           " --data fake --fake-count 64 --test-limit 16 --epochs 1");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_NE(train.output.find("batch 8"), std::string::npos) << "the config's batch was not applied:\n" << train.output;

  // An explicit flag beats the file.
  const Result override = run_cli("train --config " + d.at("tuned.json") +
                              " --batch 16 --data fake --fake-count 64 --test-limit 16 --epochs 1");
  ASSERT_EQ(override.exit_code, 0) << override.output;
  EXPECT_NE(override.output.find("batch 16"), std::string::npos) << override.output;
}

TEST(TuneCli, BadOptionsAndFilesExitTwoNamingThem) {
  const TuneDir d;
  std::ofstream(d.at("not-a-db.sqlite")) << "plain text, not a database at all.......................\n";
  struct Case {
    std::string args;
    std::string expected;
  };
  const std::string out = " -o " + d.at("t.json");
  const Case cases[] = {
      {"tune " + kTinyData + " --strategy random" + out, "random"},
      {"tune " + kTinyData + " --layouts nchw,nwhc" + out, "nwhc"},
      {"tune " + kTinyData + " --algorithms direct,winograd" + out, "winograd"},
      {"tune " + kTinyData + " --threads-list 0" + out, "--threads-list"},
      {"tune " + kTinyData + " --steps 0" + out, "--steps"},
      {"tune " + kTinyData + " --streams-list 0" + out, "--streams-list"},
      {"tune " + kTinyData + " --async-update-list maybe" + out, "maybe"},
      {"tune " + kTinyData, "--out"},
      {"tune " + kTinyData + " --db " + d.at("not-a-db.sqlite") + out, "not-a-db.sqlite"},
  };
  for (const Case& c : cases) {
    const Result r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << c.args << "\n" << r.output;
  }
}

}  // namespace
