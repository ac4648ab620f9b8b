// An OnnxModel's plan made into our Network, with the file's weights when asked.
#include <set>

#include "core/base/Error.h"
#include "core/engine/ParameterInit.h"
#include "core/engine/layers/ActivationLayers.h"
#include "core/engine/layers/BatchNormLayer.h"
#include "core/engine/layers/ElementwiseLayers.h"
#include "core/engine/layers/LinearLayer.h"
#include "core/engine/layers/PoolingLayers.h"
#include "models/onnx/OnnxModel.h"

namespace tunescope::onnx {

namespace {

std::unique_ptr<Layer> make_layer(const LayerPlan& plan, const ModelSpec& spec) {
  switch (plan.kind) {
    case LayerKind::conv:
      return std::make_unique<Conv2dLayer>(plan.name, plan.conv, spec.conv.for_layer(plan.name));
    case LayerKind::batch_norm: return std::make_unique<BatchNormLayer>(plan.name, plan.batch_norm);
    case LayerKind::relu: return std::make_unique<ReluLayer>(plan.name);
    case LayerKind::activation:
      return std::make_unique<ActivationLayer>(plan.name, plan.activation);
    case LayerKind::scale: return std::make_unique<ScaleLayer>(plan.name, plan.factor);
    case LayerKind::concat: return std::make_unique<ConcatLayer>(plan.name);
    case LayerKind::max_pool: return std::make_unique<MaxPoolLayer>(plan.name, plan.pool);
    case LayerKind::avg_pool: return std::make_unique<AvgPoolLayer>(plan.name, plan.pool);
    case LayerKind::global_avg_pool: return std::make_unique<GlobalAvgPoolLayer>(plan.name);
    case LayerKind::add: return std::make_unique<AddLayer>(plan.name);
    case LayerKind::linear:
      return std::make_unique<LinearLayer>(plan.name, plan.out_features, plan.bias);
  }
  fail(ErrorKind::runtime, "layer ", plan.name, ": unknown layer kind");
}

}  // namespace

// The tensor of `layer` a plan's weight suffix names: a parameter, or batch-norm statistics.
Tensor* weight_target(Layer& layer, const std::string& suffix) {
  for (Parameter* p : layer.parameters())
    if (p->name == layer.name() + "." + suffix) return &p->value;
  if (auto* bn = dynamic_cast<BatchNormLayer*>(&layer)) {
    if (suffix == "running_mean") return &bn->running_mean();
    if (suffix == "running_var") return &bn->running_var();
  }
  return nullptr;
}

std::unique_ptr<Network> OnnxModel::build(const ModelSpec& spec) const {
  if (spec.input.c != input.c || spec.input.h != input.h || spec.input.w != input.w)
    fail(ErrorKind::input, "model ", path, " takes ", input.c, "x", input.h, "x", input.w,
         " images, not ", spec.input.c, "x", spec.input.h, "x", spec.input.w);
  auto net = std::make_unique<Network>(spec.name);
  std::set<std::string> conv_layers;
  for (const LayerPlan& plan : layers) {
    if (plan.kind == LayerKind::conv) conv_layers.insert(plan.name);
    net->add(make_layer(plan, spec), plan.inputs);
  }
  check_per_layer_names(spec, conv_layers);
  net->build(spec.input, spec.setup);
  if (!spec.file_weights) return net;
  for (size_t i = 0; i < layers.size(); ++i) {
    Layer& layer = net->layer(static_cast<int>(i) + 1);
    for (const auto& [suffix, file] : layers[i].weights) {
      Tensor* target = weight_target(layer, suffix);
      if (!target)
        fail(ErrorKind::runtime, "layer ", layer.name(), " has no tensor '", suffix, "'");
      load_logical_values(*target, file.values,
                          cat("model ", path, ": initializer '", file.onnx_name, "'"));
    }
  }
  return net;
}

std::map<std::string, std::string> OnnxModel::parameter_sources() const {
  std::map<std::string, std::string> sources;
  for (const LayerPlan& plan : layers)
    for (const auto& [suffix, file] : plan.weights)
      if (suffix != "running_mean" && suffix != "running_var")
        sources[plan.name + "." + suffix] = file.onnx_name;
  return sources;
}

}  // namespace tunescope::onnx
