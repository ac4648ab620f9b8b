// `--model PATH.onnx` as a user runs it: tune on a zoo model end to end (per-layer
// choices and traces speak the ONNX node names; train accepts the tuned config), and a
// refused file exits 2 with the reader's message, writing nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/cli/RunCli.h"
#include "tests/core/ScratchDir.h"
#include "tests/models/onnx/OnnxTestModels.h"

namespace tunescope::onnx {
namespace {

using testing::run_cli;
using testing::ScratchDir;

const std::string kResnet20 = std::string(TUNESCOPE_ZOO_DIR) + "/resnet20.onnx";
const std::string kFakeData = " --data fake --fake-count 16 --test-limit 8 --batch 4";

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(OnnxCli, TunesResnet20WithPerLayerChoicesNamedByNode) {
  ScratchDir dir;
  // winograd runs 3x3 stride-1 layers only: the per-layer find gives resnet20's stride-2
  // and 1x1 layers direct, and the exhaustive candidate conv=winograd is skipped naming
  // the first layer it cannot run by its ONNX node.
  const std::string space =
      " --algorithms direct,winograd --layouts nchw --threads-list 1 --steps 1 --max-steps 2"
      " --warmup 0 --racing off";
  const auto tune = run_cli("tune --model " + kResnet20 + kFakeData + space +
                            " --strategy per-layer -o " + dir.at("tuned.json") + " --trace-dir " +
                            dir.at("traces") + " --db " + dir.at("results.sqlite"));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_NE(tune.output.find("per-layer find: 21 layer finds"), std::string::npos) << tune.output;
  const std::string config = read(dir / "tuned.json");
  EXPECT_NE(config.find("\"model\": \"" + kResnet20 + "\""), std::string::npos) << config;
  // The trace's layer ranges carry the node names.
  const std::string trace = read(dir / "traces" / "best.json");
  EXPECT_NE(trace.find("/layer3/layer3.2/conv2/Conv"), std::string::npos);
  EXPECT_NE(trace.find("/fc/Gemm"), std::string::npos);
  const auto train = run_cli("train --config " + dir.at("tuned.json") + kFakeData + " --epochs 1");
  ASSERT_EQ(train.exit_code, 0) << train.output;

  const auto exhaustive = run_cli("tune --model " + kResnet20 + kFakeData + space +
                                  " --strategy exhaustive -o " + dir.at("exhaustive.json"));
  ASSERT_EQ(exhaustive.exit_code, 0) << exhaustive.output;
  EXPECT_NE(exhaustive.output.find("layer /layer2/layer2.0/conv1/Conv: winograd does not support"),
            std::string::npos)
      << exhaustive.output;

  // A config choosing per ONNX node: winograd everywhere but where it cannot run.
  std::string mixed = config;
  const std::string per_layer = "\"per_layer\": {";
  ASSERT_NE(mixed.find(per_layer), std::string::npos) << mixed;
  std::string overrides;
  for (const char* node :
       {"/layer2/layer2.0/conv1/Conv", "/layer2/layer2.0/shortcut/shortcut.0/Conv",
        "/layer3/layer3.0/conv1/Conv", "/layer3/layer3.0/shortcut/shortcut.0/Conv"})
    overrides += std::string(overrides.empty() ? "" : ", ") + "\"" + node + "\": \"direct\"";
  const size_t block = mixed.find(per_layer);
  mixed.replace(block, mixed.find('}', block) + 1 - block, per_layer + overrides + "}");
  const size_t algorithm = mixed.find("\"default\": \"");
  mixed.replace(algorithm, mixed.find(',', algorithm) - algorithm, "\"default\": \"winograd\"");
  std::ofstream(dir / "mixed.json") << mixed;
  const auto run = run_cli("train --config " + dir.at("mixed.json") + kFakeData + " --epochs 1");
  ASSERT_EQ(run.exit_code, 0) << mixed << run.output;
  EXPECT_NE(run.output.find("conv winograd,/layer2/layer2.0/conv1/Conv=direct"), std::string::npos)
      << run.output;
}

TEST(OnnxCli, ConvFlagTakesNodeNamesAndListsThemForAnUnknownOne) {
  const auto ok = run_cli("train --model " + kResnet20 + kFakeData +
                          " --epochs 1 --init onnx --conv gemm,/layer2/layer2.0/conv1/Conv=direct");
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  const auto bad =
      run_cli("train --model " + kResnet20 + kFakeData + " --epochs 1 --conv gemm,conv9=direct");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("no conv layer 'conv9'"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("/conv1/Conv"), std::string::npos) << bad.output;
}

TEST(OnnxCli, RefusedModelExitsTwoNamingNodeAndWritesNothing) {
  ScratchDir dir;
  testing::TinyOnnx model;
  model.node("relu").set_op_type("Sigmoid");
  const std::string path = model.save(dir / "sigmoid.onnx");
  for (const std::string& command :
       {"profile --steps 1 --trace " + dir.at("trace.json"),
        "tune --steps 1 --warmup 0 -o " + dir.at("tuned.json") + " --db " +
            dir.at("results.sqlite") + " --trace-dir " + dir.at("traces")}) {
    const auto run = run_cli(command + " --model " + path + kFakeData);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("model " + path +
                              ": node 'relu' (Sigmoid): operator Sigmoid is not supported"),
              std::string::npos)
        << run.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "trace.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "tuned.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "results.sqlite"));
  EXPECT_FALSE(std::filesystem::exists(dir / "traces"));

  // Fake data for a large input is bounded before it is generated.
  testing::TinyOnnx large;
  auto* shape =
      large.graph.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->mutable_dim(2)->set_dim_value(2048);
  shape->mutable_dim(3)->set_dim_value(2048);
  const auto fake = run_cli("train --data fake --model " + large.save(dir / "large.onnx"));
  EXPECT_EQ(fake.exit_code, 2) << fake.output;
  EXPECT_NE(fake.output.find("--fake-count 60000: fake images of 3x2048x2048"), std::string::npos)
      << fake.output;

  // Built-in models have no file to take weights from.
  const auto init = run_cli("train --model lenet5 --init onnx" + kFakeData);
  EXPECT_EQ(init.exit_code, 2) << init.output;
  EXPECT_NE(init.output.find("--init onnx"), std::string::npos) << init.output;
}

}  // namespace
}  // namespace tunescope::onnx
