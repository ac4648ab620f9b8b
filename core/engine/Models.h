// The models tunescope trains: LeNet-5 (problem 2 of docs/ARCHITECTURE.md) and the small
// 18-layer ResNet of problem 1.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/engine/ConvChoice.h"
#include "core/engine/Network.h"

namespace tunescope {

struct ModelSpec {
  std::string name = "lenet5";  // lenet5 | resnet18-small
  Shape4 input{128, 1, 32, 32};  // batch, channels, height, width
  int64_t classes = 10;
  ConvChoice conv;
  std::string conv_source = "--conv";  // names `conv`'s origin in errors
  LayerSetup setup;
};

std::vector<std::string> model_names();
// The spatial size a model expects (LeNet-5 and ResNet-18-small: 32x32).
int64_t model_input_size(const std::string& name);
// Builds and allocates the model. Throws Error(usage) for an unknown model name, an
// unknown layer in spec.conv.per_layer, or an algorithm that cannot run a layer
// (Error(unsupported)).
std::unique_ptr<Network> build_model(const ModelSpec& spec);

}  // namespace tunescope
