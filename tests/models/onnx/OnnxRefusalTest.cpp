// What the ONNX reader takes and what it refuses: a small valid graph builds into the
// layers its nodes name; every unsupported case (operator, attribute, shape, several
// outputs, non-float types, corrupt, truncated, empty or missing file) is an
// Error(input) naming the file, the node, its operator and what is unsupported.
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

using test_support::expect_error;
using test_support::ScratchDir;
using test_support::TinyOnnx;

TEST(OnnxReader, TinyModelBecomesLayersNamedByNode) {
  ScratchDir dir;
  const std::string path = TinyOnnx{}.save(dir / "tiny.onnx");
  const OnnxModel model = read_onnx_model(path);
  EXPECT_EQ(model.input, (Shape4{1, 3, 8, 8}));
  EXPECT_EQ(model.classes, 5);
  ASSERT_EQ(model.layers.size(),
            4u);  // conv, relu, gap, fc: Flatten and the final Softmax are no layers
  EXPECT_EQ(model.layers[0].name, "conv");
  EXPECT_EQ(model.layers[0].kind, LayerKind::conv);
  EXPECT_TRUE(model.layers[0].conv.bias);
  EXPECT_EQ(model.layers[0].conv.pad, 1);
  EXPECT_EQ(model.layers[3].name, "fc");
  EXPECT_EQ(model.layers[3].inputs, std::vector<int>{3});
  EXPECT_EQ(model.parameter_sources().at("fc.weight"), "fc.w");
  EXPECT_EQ(model.parameter_sources().at("conv.bias"), "conv.b");

  ModelSpec spec;
  spec.name = path;
  spec.input = {6, 3, 8, 8};
  spec.file_weights = true;
  const auto net = build_model(spec);
  EXPECT_EQ(net->output_shape(), (Shape4{6, 5, 1, 1}));
  EXPECT_EQ(net->layer(1).name(), "conv");
}

// MatMul by W (features x classes) is Gemm by W^T with transB: same logits.
TEST(OnnxReader, MatMulEqualsGemmWithTransposedWeight) {
  ScratchDir dir;
  TinyOnnx gemm;
  TinyOnnx matmul;
  auto& fc = matmul.node("fc");
  fc.set_op_type("MatMul");
  fc.clear_attribute();
  fc.mutable_input()->RemoveLast();  // MatMul has no bias: zero it in the Gemm too
  for (auto& v : *gemm.initializer("fc.b").mutable_float_data()) v = 0;
  auto& w = matmul.initializer("fc.w");
  const auto& w_gemm = gemm.initializer("fc.w");  // [5 classes, 4 features]
  w.clear_dims();
  w.add_dims(4);
  w.add_dims(5);
  for (int f = 0; f < 4; ++f)
    for (int k = 0; k < 5; ++k) w.set_float_data(f * 5 + k, w_gemm.float_data(k * 4 + f));

  auto logits = [&](const std::string& path) {
    ModelSpec spec;
    spec.name = path;
    spec.input = {2, 3, 8, 8};
    spec.file_weights = true;
    auto net = build_model(spec);
    EXPECT_EQ(net->parameters().size(),
              path.find("matmul") != std::string::npos ? 3u : 4u);  // conv w, b; fc w (, b)
    return net;
  };
  auto a = logits(gemm.save(dir / "gemm.onnx"));
  auto b = logits(matmul.save(dir / "matmul.onnx"));
  const auto pa = a->parameters();
  const auto pb = b->parameters();
  // Same logical fc weight once loaded: {5, 4, 1, 1} either way.
  const Tensor& wa = pa[2]->value;
  const Tensor& wb = pb[2]->value;
  ASSERT_EQ(wa.shape(), wb.shape());
  for (int64_t k = 0; k < 5; ++k)
    for (int64_t f = 0; f < 4; ++f)
      EXPECT_EQ(wa.at(k, f, 0, 0), wb.at(k, f, 0, 0)) << k << "," << f;
}

// PyTorch exports AvgPool2d(padding=p) as Pad + AveragePool: the zeros become the pool's padding.
TEST(OnnxReader, ZeroPadBeforeAveragePoolBecomesItsPadding) {
  ScratchDir dir;
  TinyOnnx m;
  auto& pads = *m.graph.add_initializer();
  pads.set_name("pads");
  pads.set_data_type(::onnx::TensorProto::INT64);
  pads.add_dims(8);
  for (int64_t v : {0, 0, 1, 1, 0, 0, 1, 1}) pads.add_int64_data(v);
  m.node("relu").set_output(0, "r0");
  m.add_node("Pad", "pad", {"r0", "pads"}, {"r"});
  for (int i = m.graph.node_size() - 1; i > 2; --i)
    m.graph.mutable_node()->SwapElements(i, i - 1);  // after relu
  auto& pool = m.node("gap");
  pool.set_op_type("AveragePool");
  m.set_ints(pool, "kernel_shape", {8, 8});
  m.set_ints(pool, "strides", {8, 8});
  m.set_int(pool, "count_include_pad", 1);
  // 8x8 padded to 10x10, pooled 8x8 with stride 8: 1x1, as the fc expects.
  const OnnxModel model = read_onnx_model(m.save(dir / "pad.onnx"));
  ASSERT_EQ(model.layers.size(), 4u);  // conv, relu, avgpool, fc: no layer for the Pad
  EXPECT_EQ(model.layers[2].kind, LayerKind::avg_pool);
  EXPECT_EQ(model.layers[2].pool.pad_h, 1);
  EXPECT_EQ(model.layers[2].pool.pad_w, 1);

  // Before a max pool the zeros would change the maximum: refused.
  pool.set_op_type("MaxPool");
  pool.mutable_attribute()->RemoveLast();  // count_include_pad
  expect_error(ErrorKind::input, [&] { read_onnx_model(m.save(dir / "pad-max.onnx")); },
               {"node 'gap' (MaxPool)", "output of a Pad"});
}

// Gemm after Flatten of a 4x8x8 activation: the file's [5, 256] weight is in (c, h, w)
// order, ours is stored in the run's layout; both layouts compute the same logits.
TEST(OnnxReader, FlattenedGemmMeansTheSameInBothLayouts) {
  ScratchDir dir;
  TinyOnnx m;
  m.node("flatten").set_input(0, "r");           // no global pooling: flatten 4 x 8 x 8
  m.graph.mutable_node()->DeleteSubrange(2, 1);  // the GlobalAveragePool
  auto& w = m.initializer("fc.w");
  w.set_dims(1, 256);
  w.clear_float_data();
  for (int i = 0; i < 5 * 256; ++i)
    w.add_float_data(0.01f * static_cast<float>((i * 37) % 101) - 0.5f);
  const std::string path = m.save(dir / "flat.onnx");

  std::vector<std::vector<float>> logits;
  for (const Layout layout : {Layout::NCHW, Layout::NHWC}) {
    ModelSpec spec;
    spec.name = path;
    spec.input = {2, 3, 8, 8};
    spec.setup.layout = layout;
    spec.file_weights = true;
    auto net = build_model(spec);
    auto backend = Registry::instance().make_backend("cpu");
    ThreadPool pool(1);
    AlignedBuffer workspace(std::max<size_t>(net->workspace_bytes(), 64));
    LayerContext ctx{backend->ops(), ExecContext{pool}, workspace.data(), workspace.bytes()};
    Tensor x(spec.input, layout);
    std::vector<float> values(static_cast<size_t>(spec.input.count()));
    for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.1f * static_cast<float>(i));
    load_logical_values(x, values, "input");
    const Tensor& y = net->forward(ctx, x, true);
    logits.emplace_back();
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t k = 0; k < 5; ++k) logits.back().push_back(y.at(n, k, 0, 0));
  }
  // Same arithmetic in another order: float32 rounding only.
  for (size_t i = 0; i < logits[0].size(); ++i) EXPECT_NEAR(logits[0][i], logits[1][i], 1e-4f) << i;
}

struct Refusal {
  const char* what;
  void (*change)(TinyOnnx&);
  std::vector<std::string> parts;  // besides the file's path
};

// Moves the node added last to position `index` of the graph's (sorted) node list.
void move_last_node_to(TinyOnnx& m, int index) {
  for (int i = m.graph.node_size() - 1; i > index; --i)
    m.graph.mutable_node()->SwapElements(i, i - 1);
}

const Refusal kRefusals[] = {
    {"unsupported operator",
     [](TinyOnnx& m) { m.node("relu").set_op_type("Softplus"); },
     {"node 'relu'", "(Softplus)", "operator Softplus is not supported"}},
    {"dilated conv",
     [](TinyOnnx& m) {
       m.set_ints(m.node("conv"), "dilations", {2, 2});
     },
     {"node 'conv'", "(Conv)", "dilations = [2, 2]"}},
    {"groups that do not divide the channels",
     [](TinyOnnx& m) { m.set_int(m.node("conv"), "group", 2); },
     {"node 'conv'", "(Conv)", "group = 2 does not divide the input's 3 channels"}},
    {"grouped weight of the wrong shape",
     [](TinyOnnx& m) { m.set_int(m.node("conv"), "group", 3); },  // weight still [4, 3, 3, 3]
     {"node 'conv'", "(Conv)", "takes 3 input channels per group (3 groups)"}},
    {"leaky relu with an unknown attribute",
     [](TinyOnnx& m) {
       m.node("relu").set_op_type("LeakyRelu");
       m.set_int(m.node("relu"), "beta", 1);
     },
     {"node 'relu'", "(LeakyRelu)", "attribute 'beta' is not supported"}},
    {"product of two activations",
     [](TinyOnnx& m) {
       m.node("relu").set_op_type("Mul");
       m.node("relu").add_input("c");
     },
     {"node 'relu'", "(Mul)", "multiplies two activations"}},
    {"product with a per-channel constant",
     [](TinyOnnx& m) {
       m.node("relu").set_op_type("Mul");
       m.node("relu").add_input("conv.b");
     },
     {"node 'relu'", "(Mul)", "the factor 'conv.b' has 4 elements", "no broadcasting"}},
    {"concat on another axis",
     [](TinyOnnx& m) {
       m.node("relu").set_op_type("Concat");
       m.node("relu").add_input("c");
       m.set_int(m.node("relu"), "axis", 2);
     },
     {"node 'relu'", "(Concat)", "axis = 2", "channels (axis 1) only"}},
    {"concat of images of different sizes",
     [](TinyOnnx& m) {
       m.add_node("GlobalAveragePool", "small", {"c"}, {"s"});
       move_last_node_to(m, 1);  // right after conv
       auto& relu = m.node("relu");
       relu.set_op_type("Concat");
       relu.add_input("s");
       m.set_int(relu, "axis", 1);
     },
     {"node 'relu'", "(Concat)", "joins 8x8 and 1x1 images"}},
    {"concat of 2-D values",
     [](TinyOnnx& m) {
       m.add_node("Concat", "cat", {"f", "f"}, {"f2"});
       m.set_int(m.node("cat"), "axis", 1);
       m.node("fc").set_input(0, "f2");
       move_last_node_to(m, 4);  // right before fc
     },
     {"node 'cat'", "(Concat)", "is 2-D"}},
    {"asymmetric pads",
     [](TinyOnnx& m) {
       m.set_ints(m.node("conv"), "pads", {1, 1, 0, 0});
     },
     {"node 'conv'", "(Conv)", "pads = [1, 1, 0, 0]"}},
    {"unknown attribute",
     [](TinyOnnx& m) { m.set_int(m.node("gap"), "keepdims", 0); },
     {"node 'gap'", "(GlobalAveragePool)", "attribute 'keepdims' is not supported"}},
    {"ceil-mode pooling",
     [](TinyOnnx& m) {
       auto& pool = m.node("gap");
       pool.set_op_type("MaxPool");
       m.set_ints(pool, "kernel_shape", {2, 2});
       m.set_int(pool, "ceil_mode", 1);
     },
     {"node 'gap'", "(MaxPool)", "ceil_mode = 1"}},
    {"several outputs",
     [](TinyOnnx& m) { *m.graph.add_output() = m.graph.output(0); },
     {"2 outputs", "one output"}},
    {"non-float input",
     [](TinyOnnx& m) {
       m.graph.mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
           ::onnx::TensorProto::DOUBLE);
     },
     {"graph input 'x'", "DOUBLE", "float32"}},
    {"non-float weight",
     [](TinyOnnx& m) {
       auto& w = m.initializer("conv.w");
       w.set_data_type(::onnx::TensorProto::DOUBLE);
       for (float v : w.float_data()) w.add_double_data(v);
       w.clear_float_data();
     },
     {"node 'conv'", "(Conv)", "initializer 'conv.w'", "DOUBLE"}},
    {"weight of the wrong size",
     [](TinyOnnx& m) { m.initializer("conv.w").mutable_float_data()->RemoveLast(); },
     {"node 'conv'", "initializer 'conv.w'", "holds 107 floats for 108"}},
    {"softmax before the end",
     [](TinyOnnx& m) {
       m.node("softmax").set_output(0, "p");
       m.add_node("Relu", "after_softmax", {"p"}, {"probabilities"});
     },
     {"node 'after_softmax'", "(Relu)", "Softmax/LogSoftmax"}},
    {"adding a constant",
     [](TinyOnnx& m) {
       m.node("relu").set_op_type("Add");
       m.node("relu").add_input("conv.b");
     },
     {"node 'relu'", "(Add)", "adding a constant ('conv.b')"}},
    {"reshape to 4-D",
     [](TinyOnnx& m) {
       auto& flatten = m.node("flatten");
       flatten.set_op_type("Reshape");
       flatten.clear_attribute();
       auto& shape = *m.graph.add_initializer();
       shape.set_name("shape");
       shape.set_data_type(::onnx::TensorProto::INT64);
       shape.add_dims(4);
       for (int64_t v : {-1, 4, 1, 1}) shape.add_int64_data(v);
       flatten.add_input("shape");
     },
     {"node 'flatten'", "(Reshape)", "only [N, 4]"}},
    {"oversized input",
     [](TinyOnnx& m) {
       auto* shape =
           m.graph.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
       shape->mutable_dim(2)->set_dim_value(4096);
       shape->mutable_dim(3)->set_dim_value(4096);
     },
     {"graph input 'x' is 3x4096x4096", "values per image"}},
    {"unsorted graph",
     [](TinyOnnx& m) { m.graph.mutable_node()->SwapElements(0, 1); },
     {"node 'relu'", "(Relu)", "input 'c' is produced by no earlier node"}},
};

TEST(OnnxReader, RefusesEachUnsupportedCaseNamingFileNodeAndOperator) {
  ScratchDir dir;
  for (const Refusal& r : kRefusals) {
    SCOPED_TRACE(r.what);
    TinyOnnx model;
    r.change(model);
    const std::string path = model.save(dir / "refused.onnx");
    std::vector<std::string> parts = r.parts;
    parts.push_back("model " + path);
    try {
      read_onnx_model(path);
      ADD_FAILURE() << "not refused";
    } catch (const Error& e) {
      EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(ErrorKind::input)) << e.what();
      for (const auto& part : parts)
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
            << part << " not in: " << e.what();
    }
  }
}

void write(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(OnnxReader, RefusesCorruptTruncatedEmptyAndMissingFiles) {
  ScratchDir dir;
  write(dir / "corrupt.onnx", "this is not an onnx model");
  expect_error(ErrorKind::input, [&] { read_onnx_model(dir.at("corrupt.onnx")); },
               {dir.at("corrupt.onnx"), "not a valid ONNX file"});
  write(dir / "empty.onnx", "");
  expect_error(ErrorKind::input, [&] { read_onnx_model(dir.at("empty.onnx")); },
               {dir.at("empty.onnx"), "no graph"});
  expect_error(ErrorKind::input, [&] { read_onnx_model(dir.at("missing.onnx")); },
               {dir.at("missing.onnx"), "cannot read"});

  // Cut anywhere, a real model is refused (never read as a smaller model or a crash).
  TinyOnnx tiny;
  const std::string whole = read_bytes(tiny.save(dir / "whole.onnx"));
  for (size_t cut = 1; cut < whole.size(); cut += 7) {
    write(dir / "cut.onnx", whole.substr(0, cut));
    SCOPED_TRACE(cut);
    EXPECT_THROW(
        try { read_onnx_model(dir.at("cut.onnx")); } catch (const Error& e) {
          EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(ErrorKind::input)) << e.what();
          EXPECT_NE(std::string(e.what()).find(dir.at("cut.onnx")), std::string::npos) << e.what();
          throw;
        },
        Error);
  }
}

}  // namespace
}  // namespace tunescope::onnx
