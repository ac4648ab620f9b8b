// Bad run-config JSON given to `tunescope profile --config FILE --trace OUT` (and
// `train --config`): each exits 2 naming the file, the key and what is wrong, and leaves
// every file as it was, with no trace written. (The parser's own cases, key by key, are
// in tests/core/tuner/RunConfigTest.cpp.)
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/errors/ErrorCase.h"

namespace tunescope::test_support {
namespace {

const std::string kHead =
    R"("schema": "tunescope.config/1", "model": "lenet5", "batch": 8, "threads": 1)";
const std::string kConv = R"("layout": "nchw", "conv": {"default": "direct"})";

class ConfigErrors : public ::testing::Test {
 protected:
  // Writes `text` as NAME.json and returns the profile command that reads it.
  std::string profile_with(const std::string& name, const std::string& text) const {
    const std::string path = folder.at(name + ".json");
    write_file(path, text);
    return "profile --config " + path +
           " --data fake --fake-count 64 --test-limit 16 --warmup 0 --steps 1 --trace " +
           folder.at("trace.json");
  }
  void expect(const std::string& name, const std::string& text,
              std::vector<std::string> expected) const {
    expected.insert(expected.begin(), folder.at(name + ".json"));
    expect_error(folder.path(), {profile_with(name, text), expected});
  }

  ScratchDir folder;
};

TEST_F(ConfigErrors, ValidConfigProfiles) {
  // The fixture itself is fine: each case below differs from it in one defect.
  const CliResult r = run_cli(profile_with("valid", "{" + kHead + ", " + kConv + "}"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(folder.at("trace.json")));
}

TEST_F(ConfigErrors, NotJson) { expect("yaml", "model: lenet5\nbatch: 8\n", {"not JSON"}); }

TEST_F(ConfigErrors, TruncatedJson) {
  expect("cut", "{" + kHead + ", \"layout\": \"nc", {"not JSON"});
}

TEST_F(ConfigErrors, WrongSchemaVersion) {
  expect("schema2",
         R"({"schema": "tunescope.config/2", "model": "lenet5", "batch": 8, "threads": 1, )" +
             kConv + "}",
         {"key 'schema'", "expected 'tunescope.config/1', got 'tunescope.config/2'"});
}

TEST_F(ConfigErrors, UnknownKey) {
  expect("unknown", "{" + kHead + ", " + kConv + R"(, "colour": "blue"})",
         {"key 'colour'", "unknown key"});
}

TEST_F(ConfigErrors, WrongType) {
  expect("type", "{" + kHead + ", " + kConv + R"(, "streams": "two"})",
         {"key 'streams'", "expected an integer, got string"});
}

TEST_F(ConfigErrors, ZeroSize) {
  expect("zero",
         R"({"schema": "tunescope.config/1", "model": "lenet5", "batch": 0, "threads": 1, )" +
             kConv + "}",
         {"key 'batch'", "must be >= 1, got 0"});
}

TEST_F(ConfigErrors, NegativeSize) {
  expect("negative", "{" + kHead + ", " + kConv + R"(, "micro_batches": -2})",
         {"key 'micro_batches'", "got -2"});
}

TEST_F(ConfigErrors, UnknownAlgorithm) {
  expect("algorithm", "{" + kHead + R"(, "layout": "nchw", "conv": {"default": "strassen"}})",
         {"key 'conv.default'", "unknown convolution algorithm 'strassen'"});
}

TEST_F(ConfigErrors, ConvLayerTheModelLacks) {
  expect(
      "layer",
      "{" + kHead +
          R"(, "layout": "nchw", "conv": {"default": "direct", "per_layer": {"conv9": "gemm"}}})",
      {"key 'conv.per_layer'", "model lenet5 has no conv layer 'conv9'"});
}

TEST_F(ConfigErrors, UnknownLayout) {
  expect("layout", "{" + kHead + R"(, "layout": "chwn", "conv": {"default": "direct"}})",
         {"key 'layout'", "'chwn' is not a value (nchw, nhwc)"});
}

TEST_F(ConfigErrors, SplitNotDividingTheBatch) {
  expect("split", "{" + kHead + ", " + kConv + R"(, "streams": 2, "replicas": 3})",
         {"'replicas': replicas x micro_batches = 3 does not divide the batch 8"});
}

TEST_F(ConfigErrors, MissingFileForTrain) {
  expect_error(folder.path(),
               {"train --config " + folder.at("missing.json") + " --data fake --fake-count 64",
                {folder.at("missing.json")}});
}

}  // namespace
}  // namespace tunescope::test_support
