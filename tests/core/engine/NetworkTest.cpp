// Whole-graph checks: the gradient of a small residual graph (fan-out, join, every
// layer kind of the built-in models) and of a branching graph (grouped and depthwise
// conv, leaky ReLU, sigmoid, tanh, scale, concat: the layers of ONNX models) against
// finite differences, and layout independence of whole models.
#include "core/engine/Network.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/base/AlignedBuffer.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "core/engine/Models.h"
#include "core/engine/layers/ActivationLayers.h"
#include "core/engine/layers/BatchNormLayer.h"
#include "core/engine/layers/Conv2dLayer.h"
#include "core/engine/layers/ElementwiseLayers.h"
#include "core/engine/layers/LinearLayer.h"
#include "core/engine/layers/PoolingLayers.h"

namespace tunescope {
namespace {

struct Harness {
  std::unique_ptr<Backend> backend = Registry::instance().make_backend("cpu");
  ThreadPool pool{2};
  AlignedBuffer workspace;

  LayerContext context(const Network& net) {
    if (workspace.bytes() < net.workspace_bytes()) workspace = AlignedBuffer(net.workspace_bytes());
    return LayerContext{backend->ops(), ExecContext{pool}, workspace.data(), workspace.bytes()};
  }

  float loss(Network& net, const Tensor& x, std::span<const int32_t> labels, Tensor* dlogits) {
    LayerContext ctx = context(net);
    const Tensor& logits = net.forward(ctx, x, true);
    return backend->ops().softmax_cross_entropy(ctx.exec, logits, labels, dlogits, nullptr);
  }
};

Tensor random_tensor(Shape4 shape, Layout layout, uint64_t seed) {
  Tensor nchw(shape, Layout::NCHW);
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < nchw.size(); ++i) nchw.data()[i] = u(rng);
  Tensor out(shape, layout);
  convert_layout(nchw, out);
  return out;
}

// x -> conv -> bn -> relu -> (conv -> bn) + x -> relu -> avgpool -> fc
std::unique_ptr<Network> residual_net(Layout layout) {
  auto net = std::make_unique<Network>("residual-test");
  int a = net->chain(std::make_unique<Conv2dLayer>("stem", Conv2dSpec{4, 3, 1, 1, true}, "direct"));
  a = net->chain(std::make_unique<BatchNormLayer>("bn0"));
  a = net->chain(std::make_unique<ReluLayer>("relu0"));
  int b =
      net->chain(std::make_unique<Conv2dLayer>("branch", Conv2dSpec{4, 3, 1, 1, false}, "direct"));
  b = net->chain(std::make_unique<BatchNormLayer>("bn1"));
  int sum = net->add(std::make_unique<AddLayer>("join"), {b, a});
  net->add(std::make_unique<ReluLayer>("relu1"), {sum});
  net->chain(std::make_unique<AvgPoolLayer>("pool", PoolParams{}));
  net->chain(std::make_unique<LinearLayer>("fc", 3));
  net->build({3, 2, 6, 6}, LayerSetup{layout, "cpu", 7});
  return net;
}

// x -> stem conv -> leaky ReLU -> grouped conv (4 groups) -> sigmoid ----------> concat
//                 \-> depthwise conv (stride 1, 8 groups) -> tanh -> scale x0.5 /
// -> avgpool -> fc: every input of the concat and each new layer's gradient reaches a
// parameter upstream of it.
std::unique_ptr<Network> branching_net(Layout layout) {
  auto net = std::make_unique<Network>("branching-test");
  const int stem =
      net->chain(std::make_unique<Conv2dLayer>("stem", Conv2dSpec{8, 3, 1, 1, true}, "direct"));
  net->chain(
      std::make_unique<ActivationLayer>("leaky", ActivationParams{Activation::leaky_relu, 0.1f}));
  net->chain(std::make_unique<Conv2dLayer>("grouped", Conv2dSpec{8, 3, 1, 1, false, 4}, "direct"));
  const int a = net->chain(
      std::make_unique<ActivationLayer>("sigmoid", ActivationParams{Activation::sigmoid}));
  int b = net->add(
      std::make_unique<Conv2dLayer>("depthwise", Conv2dSpec{8, 3, 1, 1, true, 8}, "direct"),
      {stem});
  b = net->chain(std::make_unique<ActivationLayer>("tanh", ActivationParams{Activation::tanh}));
  b = net->chain(std::make_unique<ScaleLayer>("half", 0.5f));
  net->add(std::make_unique<ConcatLayer>("concat"), {a, b});
  net->chain(std::make_unique<AvgPoolLayer>("pool", PoolParams{}));
  net->chain(std::make_unique<LinearLayer>("fc", 3));
  net->build({3, 2, 6, 6}, LayerSetup{layout, "cpu", 7});
  return net;
}

class NetworkLayouts : public ::testing::TestWithParam<Layout> {};

// Central differences on a sample of parameters; double-checked against the analytic
// gradient with relative tolerance 2e-2 (float32 forward, eps 1e-2: truncation and
// rounding errors are both ~1e-3 relative here). Returns how many were checked.
int check_parameter_gradients(Network& net, Layout layout) {
  Harness h;
  const Tensor x = random_tensor({3, 2, 6, 6}, layout, 11);
  const std::vector<int32_t> labels{0, 2, 1};
  Tensor dlogits({3, 3, 1, 1}, layout);
  h.loss(net, x, labels, &dlogits);
  net.backward(h.context(net), x, dlogits);

  std::mt19937 rng(5);
  int checked = 0;
  for (Parameter* p : net.parameters()) {
    const Tensor analytic = p->grad;
    for (int sample = 0; sample < 4; ++sample) {
      const int64_t i = std::uniform_int_distribution<int64_t>(0, p->value.size() - 1)(rng);
      const float saved = p->value.data()[i];
      const float eps = 1e-2f;
      p->value.data()[i] = saved + eps;
      const double up = h.loss(net, x, labels, nullptr);
      p->value.data()[i] = saved - eps;
      const double down = h.loss(net, x, labels, nullptr);
      p->value.data()[i] = saved;
      const double numeric = (up - down) / (2 * eps);
      const double a = analytic.data()[i];
      EXPECT_NEAR(a, numeric, 2e-2 * std::max(1.0, std::abs(numeric)))
          << p->name << "[" << i << "]";
      ++checked;
    }
  }
  return checked;
}

TEST_P(NetworkLayouts, ParameterGradientsMatchFiniteDifferences) {
  auto net = residual_net(GetParam());
  // stem w+b, bn0 gamma+beta, branch w, bn1 gamma+beta, fc w+b
  EXPECT_EQ(check_parameter_gradients(*net, GetParam()), 4 * 9);
}

TEST_P(NetworkLayouts, BranchingGraphGradientsMatchFiniteDifferences) {
  auto net = branching_net(GetParam());
  // stem w+b, grouped w, depthwise w+b, fc w+b
  EXPECT_EQ(check_parameter_gradients(*net, GetParam()), 4 * 7);
}

INSTANTIATE_TEST_SUITE_P(BothLayouts, NetworkLayouts, ::testing::Values(Layout::NCHW, Layout::NHWC),
                         [](const auto& info) { return to_string(info.param); });

// The same model, weights and data in NCHW and NHWC give the same loss and gradients
// up to float reassociation (relative 1e-4).
TEST(Models, LayoutsGiveSameLossAndGradients) {
  for (const std::string& model : model_names()) {
    Harness h;
    std::vector<float> losses;
    std::vector<Tensor> first_grads;
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      ModelSpec spec;
      spec.name = model;
      spec.input = {4, model == "lenet5" ? 1 : 3, 32, 32};
      spec.setup.layout = layout;
      auto net = build_model(spec);
      const Tensor x = random_tensor(spec.input, layout, 3);
      const std::vector<int32_t> labels{1, 7, 3, 9};
      Tensor dlogits({4, 10, 1, 1}, layout);
      losses.push_back(h.loss(*net, x, labels, &dlogits));
      net->backward(h.context(*net), x, dlogits);
      first_grads.push_back(net->parameters().front()->grad);
    }
    EXPECT_NEAR(losses[0], losses[1], 1e-4 * std::abs(losses[0])) << model;
    const Tensor& g0 = first_grads[0];
    const Tensor& g1 = first_grads[1];
    const Shape4 s = g0.shape();
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t c = 0; c < s.c; ++c)
        for (int64_t y = 0; y < s.h; ++y)
          for (int64_t x = 0; x < s.w; ++x)
            ASSERT_NEAR(g0.at(n, c, y, x), g1.at(n, c, y, x),
                        1e-4 + 1e-3 * std::abs(g0.at(n, c, y, x)))
                << model;
  }
}

TEST(Models, ResnetHas18WeightLayers) {
  ModelSpec spec;
  spec.name = "resnet18-small";
  spec.input = {2, 3, 32, 32};
  auto net = build_model(spec);
  int weighted = 0, projections = 0;
  for (int i = 1; i <= net->layer_count(); ++i) {
    const Layer& l = net->layer(i);
    if (l.kind() == "conv" && l.name().find(".proj") != std::string::npos)
      ++projections;
    else if (l.kind() == "conv" || l.kind() == "fc")
      ++weighted;
  }
  EXPECT_EQ(weighted, 18);
  EXPECT_EQ(projections, 3);
  EXPECT_EQ(net->output_shape(), (Shape4{2, 10, 1, 1}));
}

TEST(Models, RejectsUnknownModelLayerAndAlgorithm) {
  ModelSpec spec;
  spec.input = {2, 1, 32, 32};
  spec.name = "alexnet";
  EXPECT_THROW(build_model(spec), Error);
  spec.name = "lenet5";
  spec.conv.per_layer["conv9"] = "gemm";
  try {
    build_model(spec);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("conv9"), std::string::npos);
  }
  spec.conv = ConvChoice{"strassen", {}};
  EXPECT_THROW(build_model(spec), Error);
}

}  // namespace
}  // namespace tunescope
