// The zoo (models/zoo, made by make-zoo.py with PyTorch): on the weights and the fixed
// batch of each model's reference file, our training-mode forward pass, loss and
// gradients equal PyTorch's, in both layouts.
//
// Tolerances (float32 through up to 57 layers, batch norm over batch statistics of 4
// images, different summation orders): logits and every gradient tensor within a
// relative L2 error of 1e-3, the loss within a relative 1e-4. A gradient that is zero
// in exact arithmetic (the bias of a conv followed by batch norm: PyTorch's is ~1e-8)
// has no relative error: each tensor's error is taken relative to the larger of its
// own norm and 1e-3 x the largest gradient norm of the model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/base/AlignedBuffer.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "core/engine/Models.h"
#include "core/engine/ParameterInit.h"
#include "models/onnx/OnnxModel.h"
#include "tests/models/onnx/OnnxTestModels.h"

namespace tunescope::onnx {
namespace {

using test_support::l2;
using test_support::relative_l2;

constexpr double kLogitsTolerance = 1e-3;
constexpr double kLossTolerance = 1e-4;
constexpr double kGradientTolerance = 1e-3;

std::filesystem::path zoo(const std::string& file) {
  return std::filesystem::path(TUNESCOPE_ZOO_DIR) / file;
}

struct ZooCase {
  std::string model;
  Layout layout;
};

class OnnxZoo : public ::testing::TestWithParam<ZooCase> {};

TEST_P(OnnxZoo, ForwardLossAndGradientsEqualPyTorch) {
  const ZooCase c = GetParam();
  const test_support::ZooReference ref =
      test_support::read_zoo_reference(zoo(c.model + ".reference.onnx"));
  const std::string path = zoo(c.model + ".onnx").string();
  const OnnxModel model = read_onnx_model(path);
  const auto& in_dims = ref.dims.at("input");
  ModelSpec spec;
  spec.name = path;
  spec.input = {in_dims[0], in_dims[1], in_dims[2], in_dims[3]};
  spec.setup.layout = c.layout;
  spec.file_weights = true;
  auto net = build_model(spec);

  auto backend = Registry::instance().make_backend("cpu");
  ThreadPool pool(2);
  AlignedBuffer workspace(std::max<size_t>(net->workspace_bytes(), 64));
  LayerContext ctx{backend->ops(), ExecContext{pool}, workspace.data(), workspace.bytes()};
  Tensor x(spec.input, c.layout);
  load_logical_values(x, ref.floats.at("input"), "input");
  const Tensor& logits = net->forward(ctx, x, true);
  Tensor dlogits(logits.shape(), c.layout);
  const float loss =
      backend->ops().softmax_cross_entropy(ctx.exec, logits, ref.labels, &dlogits, nullptr);

  const double logits_error = relative_l2(logical_values(logits), ref.floats.at("logits"));
  EXPECT_LE(logits_error, kLogitsTolerance);
  std::printf("[ info     ] %s logits relative L2 error %.2e, loss %.6f vs PyTorch %.6f\n",
              c.model.c_str(), logits_error, loss, ref.floats.at("loss")[0]);
  const float torch_loss = ref.floats.at("loss")[0];
  EXPECT_NEAR(loss, torch_loss, kLossTolerance * std::abs(torch_loss)) << "loss";

  // Gradients, per parameter tensor, where the reference has them (make-zoo.py REFERENCES).
  const bool has_gradients = std::any_of(ref.floats.begin(), ref.floats.end(), [](const auto& t) {
    return t.first.rfind("grad:", 0) == 0;
  });
  if (!has_gradients) return;
  net->backward(ctx, x, dlogits);
  const auto sources = model.parameter_sources();
  double largest = 0;
  for (const auto& [name, values] : ref.floats)
    if (name.rfind("grad:", 0) == 0) largest = std::max(largest, l2(values));
  size_t checked = 0;
  double worst = 0;
  for (Parameter* p : net->parameters()) {
    const std::string source = sources.at(p->name);
    const auto it = ref.floats.find("grad:" + source);
    ASSERT_NE(it, ref.floats.end()) << p->name << " (" << source << ") has no reference gradient";
    const double error = relative_l2(logical_values(p->grad), it->second, 1e-3 * largest);
    EXPECT_LE(error, kGradientTolerance) << p->name << " (" << source << ")";
    worst = std::max(worst, error);
    ++checked;
  }
  std::printf("[ info     ] %s: %zu gradient tensors, worst relative L2 error %.2e\n",
              c.model.c_str(), checked, worst);
  // Every parameter PyTorch trains is one of ours.
  size_t reference_gradients = 0;
  for (const auto& [name, values] : ref.floats) reference_gradients += name.rfind("grad:", 0) == 0;
  EXPECT_EQ(checked, reference_gradients);
}

INSTANTIATE_TEST_SUITE_P(
    Models, OnnxZoo,
    ::testing::Values(ZooCase{"resnet20", Layout::NCHW}, ZooCase{"resnet20", Layout::NHWC},
                      ZooCase{"resnet56", Layout::NCHW}, ZooCase{"vgg11", Layout::NCHW},
                      ZooCase{"vgg11", Layout::NHWC}, ZooCase{"mobilenet", Layout::NCHW},
                      ZooCase{"mobilenet", Layout::NHWC}, ZooCase{"opsnet", Layout::NCHW},
                      ZooCase{"opsnet", Layout::NHWC}),
    [](const auto& info) {
      return info.param.model + "_" + (info.param.layout == Layout::NCHW ? "nchw" : "nhwc");
    });

}  // namespace
}  // namespace tunescope::onnx
