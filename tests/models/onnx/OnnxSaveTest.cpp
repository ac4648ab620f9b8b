// `train --save-onnx`: a copy of the model with the trained weights. Round trip through
// the API: a network built from a model, its weights and batch-norm statistics changed
// (as training changes them), saved and read back with the file's weights gives the
// same forward output, training and inference mode: bitwise in the layout it was saved
// from, within a relative L2 error of 1e-5 in the other (float sums in another order);
// on opsnet (grouped conv, batch norm, Gemm) and a MatMul model (stored transposed).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/base/AlignedBuffer.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "core/engine/Models.h"
#include "core/engine/ParameterInit.h"
#include "models/onnx/OnnxModel.h"
#include "tests/core/ExpectError.h"
#include "tests/core/FileBytes.h"
#include "tests/core/ScratchDir.h"
#include "tests/models/onnx/OnnxTestModels.h"

namespace tunescope::onnx {
namespace {

using test_support::read_bytes;
using test_support::relative_l2;

using test_support::ScratchDir;
using test_support::TinyOnnx;

constexpr double kOtherLayoutTolerance = 1e-5;

struct Harness {
  std::unique_ptr<Backend> backend = Registry::instance().make_backend("cpu");
  ThreadPool pool{2};
  AlignedBuffer workspace;

  std::unique_ptr<Network> build(const std::string& path, Layout layout) {
    const OnnxModel model = read_onnx_model(path);
    ModelSpec spec;
    spec.name = path;
    spec.input = {4, model.input.c, model.input.h, model.input.w};
    spec.setup.layout = layout;
    spec.file_weights = true;
    auto net = build_model(spec);
    if (workspace.bytes() < net->workspace_bytes())
      workspace = AlignedBuffer(net->workspace_bytes());
    return net;
  }
  std::vector<float> logits(Network& net, bool training) {
    LayerContext ctx{backend->ops(), ExecContext{pool}, workspace.data(), workspace.bytes()};
    Tensor x(net.input_shape(), net.layout());
    std::vector<float> values(static_cast<size_t>(x.size()));
    for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.37f * static_cast<float>(i));
    load_logical_values(x, values, "input");
    return logical_values(net.forward(ctx, x, training));
  }
};

void expect_round_trip(const std::string& original, const ScratchDir& dir) {
  SCOPED_TRACE(original);
  const std::string before = read_bytes(original);
  Harness h;
  auto trained = h.build(original, Layout::NHWC);
  h.logits(*trained, true);  // moves the batch-norm running statistics
  for (Parameter* p : trained->parameters()) {
    std::vector<float> values = logical_values(p->value);
    for (size_t i = 0; i < values.size(); ++i) values[i] += 0.01f * std::cos(static_cast<float>(i));
    load_logical_values(p->value, values, p->name);
  }
  const std::string saved = dir.at("saved.onnx");
  read_onnx_model(original).save_weights(*trained, saved);
  EXPECT_EQ(read_bytes(original), before) << "the original changed";
  EXPECT_NE(read_bytes(saved), before) << "the copy holds the original weights";
  EXPECT_EQ(read_onnx_model(saved).layers.size(), read_onnx_model(original).layers.size());

  auto same_layout = h.build(saved, Layout::NHWC);
  auto other_layout = h.build(saved, Layout::NCHW);
  for (const bool training : {false, true}) {
    SCOPED_TRACE(training ? "training mode" : "inference mode");
    const std::vector<float> want = h.logits(*trained, training);
    EXPECT_EQ(h.logits(*same_layout, training), want);
    EXPECT_LE(relative_l2(h.logits(*other_layout, training), want), kOtherLayoutTolerance);
  }
  // Nothing but the copy was written beside it.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            std::count_if(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator(),
                          [](const auto& entry) { return entry.path().extension() == ".onnx"; }));
}

TEST(OnnxSave, OpsnetRoundTripsItsTrainedWeights) {
  ScratchDir dir;
  expect_round_trip(std::string(TUNESCOPE_ZOO_DIR) + "/opsnet.onnx", dir);
}

TEST(OnnxSave, MatMulWeightIsWrittenBackTransposed) {
  ScratchDir dir;
  TinyOnnx matmul;
  auto& fc = matmul.node("fc");
  fc.set_op_type("MatMul");
  fc.clear_attribute();
  fc.mutable_input()->RemoveLast();
  auto& w = matmul.initializer("fc.w");  // now [4 features, 5 classes]
  w.clear_dims();
  w.add_dims(4);
  w.add_dims(5);
  const std::string path = matmul.save(dir / "matmul.onnx");
  ScratchDir out;
  expect_round_trip(path, out);
}

TEST(OnnxSave, AnUnwritablePathIsRefusedNamingIt) {
  ScratchDir dir;
  const std::string original = std::string(TUNESCOPE_ZOO_DIR) + "/opsnet.onnx";
  Harness h;
  auto net = h.build(original, Layout::NCHW);
  const std::string bad = dir.at("missing/saved.onnx");
  test_support::expect_error(ErrorKind::input,
                             [&] { read_onnx_model(original).save_weights(*net, bad); },
                             {"--save-onnx " + bad, "cannot write"});
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace tunescope::onnx
