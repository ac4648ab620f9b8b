// An ONNX model read and checked against what the engine can train, independent of the
// batch: a plan of our layers (named after the ONNX nodes) with the file's weights.
// Reading refuses (Error(input), naming the file, the node and its operator) whatever
// the engine would not run as the file means it: an unsupported operator, attribute or
// shape, several graph outputs, a non-float type, a corrupt or truncated file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/base/OpKernels.h"
#include "core/base/Shape4.h"
#include "core/engine/Models.h"
#include "core/engine/Network.h"
#include "core/engine/layers/Conv2dLayer.h"

namespace tunescope::onnx {

// A model file larger than this is refused before it is read (protobuf's own limit is 2 GiB).
inline constexpr int64_t kMaxFileBytes = int64_t{1} << 30;
// Bounds of the graph input's (c, h, w): it sizes every activation and the fake data.
inline constexpr int64_t kMaxInputChannels = 4096;
inline constexpr int64_t kMaxInputSide = 4096;
inline constexpr int64_t kMaxInputElements = int64_t{1} << 24;  // c x h x w of one image

// One initializer as logical (n, c, h, w) values for one of our tensors.
struct FileTensor {
  std::string onnx_name;
  Shape4 shape{0, 0, 0, 0};
  std::vector<float> values;
  // The file stores it as [features, out] (MatMul, Gemm without transB): the transpose of
  // our logical {out, c, h, w}, so values were transposed when read (and are on writing).
  bool transposed = false;
};

enum class LayerKind {
  conv,
  batch_norm,
  relu,
  activation,  // LeakyRelu, Sigmoid, Tanh
  scale,       // Mul by a constant
  max_pool,
  avg_pool,
  global_avg_pool,
  add,
  concat,
  linear
};

struct LayerPlan {
  LayerKind kind = LayerKind::relu;
  std::string name;         // the ONNX node's name (made unique; "<op>_<index>" when it has none)
  std::string op_type;      // the ONNX operator it came from
  std::vector<int> inputs;  // Network node ids: 0 is the data input, layer i is node i + 1
  Conv2dSpec conv;
  PoolParams pool;
  BatchNormParams batch_norm;
  ActivationParams activation;
  float factor = 1.0f;  // scale
  int64_t out_features = 0;
  bool bias = true;  // linear
  // Our tensor's suffix ("weight", "bias", "gamma", "beta", "running_mean", "running_var")
  // -> the file's values for it.
  std::map<std::string, FileTensor> weights;
};

struct OnnxModel {
  std::string path;
  Shape4 input{1, 0, 0, 0};  // n: the file's batch (1 when symbolic); the engine's follows --batch
  int64_t classes = 0;
  std::vector<LayerPlan> layers;

  // Builds the network for spec.input (its c, h, w must be the file's), running
  // spec.conv's algorithms; with spec.file_weights the initializers are the starting
  // weights (and batch-norm statistics), otherwise our usual initialisation.
  std::unique_ptr<Network> build(const ModelSpec& spec) const;
  // Our parameter name ("<node>.weight", ...) -> the ONNX initializer it comes from.
  std::map<std::string, std::string> parameter_sources() const;
  // Writes a copy of the model file with `net`'s weights and batch-norm statistics in
  // place of its initializers (net built from this model, either layout). Written to a
  // temporary file beside `out_path` and renamed, so a failure leaves nothing; throws
  // Error(input) naming `out_path` when it cannot be written.
  void save_weights(Network& net, const std::string& out_path) const;
};

// The tensor of a layer built from a plan that a plan's weight suffix names: a parameter
// or batch-norm statistics (null: none).
Tensor* weight_target(Layer& layer, const std::string& suffix);

// Throws Error(input) for a file it refuses (see above).
OnnxModel read_onnx_model(const std::string& path);

}  // namespace tunescope::onnx
