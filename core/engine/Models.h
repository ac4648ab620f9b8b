// The models tunescope trains: LeNet-5 (problem 2 of docs/ARCHITECTURE.md), the small
// 18-layer ResNet of problem 1, and models read from files (core/engine/ModelFiles.h).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/engine/ConvChoice.h"
#include "core/engine/Network.h"

namespace tunescope {

struct ModelSpec {
  std::string name = "lenet5";   // lenet5 | resnet18-small | PATH.onnx
  Shape4 input{128, 1, 32, 32};  // batch, channels, height, width
  int64_t classes = 10;
  ConvChoice conv;
  std::string conv_source = "conv";  // names `conv`'s origin in errors
  LayerSetup setup;
  bool file_weights = false;  // a model file's weights as the starting weights (--init onnx)
};

// What a model takes and gives: a built-in one any channel count (fake data gets
// `channels`), a model file exactly its input's channels and at most its classes.
struct ModelInput {
  int64_t channels = 1;
  bool channels_fixed = false;
  int64_t height = 32;
  int64_t width = 32;
  int64_t classes = 0;  // 0: as many as the data has
};

// The built-in models.
std::vector<std::string> model_names();
// Throws Error(usage) for a name that is neither built in nor a model file's path;
// for a model file, what its reader throws (Error(input) for a file it refuses).
ModelInput model_input(const std::string& name);
// Builds and allocates the model. Throws Error(usage) for an unknown model name, an
// unknown layer in spec.conv.per_layer, or an algorithm that cannot run a layer
// (Error(unsupported)); a model file's reader throws Error(input) for a file it refuses.
std::unique_ptr<Network> build_model(const ModelSpec& spec);
// Throws Error(usage) naming spec.conv_source when spec.conv.per_layer names a layer that
// is not among `conv_layers` (the model's conv layers), listing them.
void check_per_layer_names(const ModelSpec& spec, const std::set<std::string>& conv_layers);

}  // namespace tunescope
