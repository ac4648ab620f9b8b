#include "core/engine/Models.h"

#include <set>

#include "core/base/Error.h"
#include "core/engine/ModelFiles.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/layers/BatchNormLayer.h"
#include "core/engine/layers/Conv2dLayer.h"
#include "core/engine/layers/ElementwiseLayers.h"
#include "core/engine/layers/LinearLayer.h"
#include "core/engine/layers/PoolingLayers.h"

namespace tunescope {

namespace {

class ModelBuilder {
 public:
  ModelBuilder(const ModelSpec& spec)
      : spec_(spec),
        net_(std::make_unique<Network>(spec.name)),
        fuse_(knobs::fuse.get(spec.setup.knobs)) {}

  int conv(const std::string& name, int from, Conv2dSpec conv) {
    used_.insert(name);
    return net_->add(std::make_unique<Conv2dLayer>(name, conv, spec_.conv.for_layer(name)), {from});
  }
  template <typename L, typename... Args>
  int layer(int from, Args&&... args) {
    return net_->add(std::make_unique<L>(std::forward<Args>(args)...), {from});
  }
  int add(const std::string& name, int a, int b) {
    return net_->add(std::make_unique<AddLayer>(name), {a, b});
  }
  // Batch norm `bn` then ReLU `relu`, or the fused layer "<bn>+<relu>" under the fuse knob.
  int bn_relu(int from, const std::string& bn, const std::string& relu) {
    if (!fuse_) return layer<ReluLayer>(layer<BatchNormLayer>(from, bn), relu);
    return net_->add(std::make_unique<BatchNormReluLayer>(cat(bn, "+", relu), bn, false), {from});
  }
  // The fused layer "<bn>+<add>+<relu>": relu(bn(from) + shortcut).
  int bn_add_relu(int from, int shortcut, const std::string& bn, const std::string& add_name,
                  const std::string& relu) {
    return net_->add(
        std::make_unique<BatchNormReluLayer>(cat(bn, "+", add_name, "+", relu), bn, true),
        {from, shortcut});
  }
  // Conv `name` (5x5, stride 1, with bias), ReLU `relu` and 2x2 max pool `pool`; under the
  // fuse knob a bias-free conv and one layer "<name>.bias+<relu>+<pool>" holding the bias.
  int conv_relu_pool(const std::string& name, int from, int64_t out_channels,
                     const std::string& relu, const std::string& pool) {
    if (!fuse_) {
      const int x = conv(name, from, {out_channels, 5, 1, 0, true});
      return layer<MaxPoolLayer>(layer<ReluLayer>(x, relu), pool, PoolParams{});
    }
    const int x = conv(name, from, {out_channels, 5, 1, 0, false});
    return layer<BiasReluMaxPoolLayer>(x, cat(name, ".bias+", relu, "+", pool), name + ".bias",
                                       PoolParams{});
  }
  bool fuse() const { return fuse_; }

  std::unique_ptr<Network> finish() {
    check_per_layer_names(spec_, used_);
    net_->build(spec_.input, spec_.setup);
    return std::move(net_);
  }

 private:
  const ModelSpec& spec_;
  std::unique_ptr<Network> net_;
  std::set<std::string> used_;
  bool fuse_;
};

// conv 5x5 6 -> pool -> conv 5x5 16 -> pool -> fc 120 -> fc 84 -> fc classes, ReLU between
// (each conv's bias, ReLU and pool one layer under the fuse knob).
std::unique_ptr<Network> lenet5(const ModelSpec& spec) {
  ModelBuilder b(spec);
  int x = b.conv_relu_pool("conv1", Network::kInput, 6, "relu1", "pool1");
  x = b.conv_relu_pool("conv2", x, 16, "relu2", "pool2");
  x = b.layer<LinearLayer>(x, "fc1", 120);
  x = b.layer<ReluLayer>(x, "relu3");
  x = b.layer<LinearLayer>(x, "fc2", 84);
  x = b.layer<ReluLayer>(x, "relu4");
  b.layer<LinearLayer>(x, "fc3", spec.classes);
  return b.finish();
}

// Basic block: conv3x3-bn-relu-conv3x3-bn, plus identity or 1x1 projection, then relu
// (bn-relu and bn-add-relu one layer each under the fuse knob).
int basic_block(ModelBuilder& b, const std::string& name, int x, int64_t in_channels,
                int64_t out_channels, int64_t stride) {
  int y = b.conv(name + ".conv1", x, {out_channels, 3, stride, 1, false});
  y = b.bn_relu(y, name + ".bn1", name + ".relu1");
  y = b.conv(name + ".conv2", y, {out_channels, 3, 1, 1, false});
  // Unfused, bn2 comes before the shortcut as it always did (same graph and parameter
  // order); the fused layer needs the shortcut as its input, so it comes after.
  if (!b.fuse()) y = b.layer<BatchNormLayer>(y, name + ".bn2");
  int shortcut = x;
  if (stride != 1 || in_channels != out_channels) {
    shortcut = b.conv(name + ".proj", x, {out_channels, 1, stride, 0, false});
    shortcut = b.layer<BatchNormLayer>(shortcut, name + ".proj_bn");
  }
  if (b.fuse()) return b.bn_add_relu(y, shortcut, name + ".bn2", name + ".add", name + ".relu2");
  const int sum = b.add(name + ".add", y, shortcut);
  return b.layer<ReluLayer>(sum, name + ".relu2");
}

// 18 weight layers: stem conv + 4 stages x 2 basic blocks x 2 convs + fc; filter banks
// 16, 32, 64, 128 on 32x32 inputs (the net of problem 1).
std::unique_ptr<Network> resnet18_small(const ModelSpec& spec) {
  ModelBuilder b(spec);
  int x = b.conv("conv1", Network::kInput, {16, 3, 1, 1, false});
  x = b.bn_relu(x, "bn1", "relu1");
  int64_t channels = 16;
  const int64_t widths[] = {16, 32, 64, 128};
  for (int stage = 0; stage < 4; ++stage) {
    for (int block = 0; block < 2; ++block) {
      const int64_t stride = (stage > 0 && block == 0) ? 2 : 1;
      x = basic_block(b, cat("s", stage + 1, "b", block + 1), x, channels, widths[stage], stride);
      channels = widths[stage];
    }
  }
  x = b.layer<GlobalAvgPoolLayer>(x, "pool");
  b.layer<LinearLayer>(x, "fc", spec.classes);
  return b.finish();
}

}  // namespace

void check_per_layer_names(const ModelSpec& spec, const std::set<std::string>& conv_layers) {
  for (const auto& [layer, algorithm] : spec.conv.per_layer)
    if (!conv_layers.count(layer)) {
      std::string known;
      for (const auto& name : conv_layers) known += (known.empty() ? "" : ", ") + name;
      fail(ErrorKind::usage, spec.conv_source, ": model ", spec.name, " has no conv layer '", layer,
           "' (conv layers: ", known, ")");
    }
}

std::vector<std::string> model_names() { return {"lenet5", "resnet18-small"}; }

ModelInput model_input(const std::string& name) {
  if (name == "lenet5") return ModelInput{1, false, 32, 32, 0};
  if (name == "resnet18-small") return ModelInput{3, false, 32, 32, 0};
  if (is_model_file(name)) {
    const ModelFileShape shape = model_file_format(name).shape(name);
    return ModelInput{shape.channels, true, shape.height, shape.width, shape.classes};
  }
  fail(ErrorKind::usage, "unknown model '", name,
       "' (known: lenet5, resnet18-small, or a PATH.onnx file)");
}

std::unique_ptr<Network> build_model(const ModelSpec& given) {
  // Conv layers the spec leaves unnamed run the backend's default algorithm.
  ModelSpec spec = given;
  spec.conv = with_backend_default(given.conv, given.setup.backend);
  if (is_model_file(spec.name)) return model_file_format(spec.name).build(spec);
  if (spec.file_weights)
    fail(ErrorKind::usage, "init onnx: model ", spec.name,
         " is built in and has no file to take weights from");
  if (spec.name == "lenet5") return lenet5(spec);
  if (spec.name == "resnet18-small") return resnet18_small(spec);
  fail(ErrorKind::usage, "unknown model '", spec.name,
       "' (known: lenet5, resnet18-small, or a PATH.onnx file)");
}

}  // namespace tunescope
