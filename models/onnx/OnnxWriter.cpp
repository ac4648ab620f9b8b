// `train --save-onnx`: the model file again, with the trained weights in its initializers.
// Everything else (graph, names, attributes, opset) is the file's own, so the copy reads
// back into the same network and into any ONNX tool.
#include <onnx/onnx_pb.h>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/base/Error.h"
#include "core/engine/ParameterInit.h"
#include "models/onnx/OnnxModel.h"

namespace tunescope::onnx {

namespace pb = ::onnx;

namespace {

pb::ModelProto read_proto(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  pb::ModelProto proto;
  if (!in || !proto.ParseFromIstream(&in))
    fail(ErrorKind::input, "model ", path, ": cannot read it again to save the weights");
  return proto;
}

// The file's tensors by name: initializers and the values of Constant nodes.
std::map<std::string, pb::TensorProto*> file_tensors(pb::GraphProto& graph) {
  std::map<std::string, pb::TensorProto*> tensors;
  for (auto& init : *graph.mutable_initializer()) tensors[init.name()] = &init;
  for (auto& node : *graph.mutable_node())
    if (node.op_type() == "Constant" && node.output_size() > 0)
      for (auto& a : *node.mutable_attribute())
        if (a.name() == "value" && a.has_t()) tensors[node.output(0)] = a.mutable_t();
  return tensors;
}

// Our logical {out, c, h, w} as the file's [features, out].
std::vector<float> transpose_back(const std::vector<float>& values, const Shape4& shape) {
  const int64_t out = shape.n, features = shape.item_count();
  std::vector<float> file(values.size());
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < features; ++i)
      file[static_cast<size_t>(i * out + o)] = values[static_cast<size_t>(o * features + i)];
  return file;
}

}  // namespace

void OnnxModel::save_weights(Network& net, const std::string& out_path) const {
  pb::ModelProto proto = read_proto(path);
  auto tensors = file_tensors(*proto.mutable_graph());
  for (size_t i = 0; i < layers.size(); ++i) {
    Layer& layer = net.layer(static_cast<int>(i) + 1);
    for (const auto& [suffix, file] : layers[i].weights) {
      const Tensor* ours = weight_target(layer, suffix);
      const auto it = tensors.find(file.onnx_name);
      if (!ours || it == tensors.end())
        fail(ErrorKind::runtime, "model ", path, ": no tensor for '", file.onnx_name, "' of layer ",
             layer.name());
      std::vector<float> values = logical_values(*ours);
      if (file.transposed) values = transpose_back(values, file.shape);
      pb::TensorProto& t = *it->second;
      t.clear_float_data();
      t.set_raw_data(values.data(), values.size() * sizeof(float));  // little-endian, as read
    }
  }
  // A temporary file beside the target, renamed over it when complete: a failure midway
  // leaves neither a partial file nor a changed target.
  const std::filesystem::path target(out_path);
  const std::filesystem::path temp =
      target.parent_path() / cat(".", target.filename().string(), ".", getpid(), ".tmp");
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out)
      fail(ErrorKind::input, "--save-onnx ", out_path, ": cannot write in ",
           target.parent_path().empty() ? "." : target.parent_path().string());
    const bool written = proto.SerializeToOstream(&out) && out.flush();
    out.close();
    if (!written || !out) {
      std::filesystem::remove(temp);
      fail(ErrorKind::input, "--save-onnx ", out_path, ": writing failed (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, target, ec);
  if (ec) {
    std::filesystem::remove(temp);
    fail(ErrorKind::input, "--save-onnx ", out_path, ": ", ec.message());
  }
}

}  // namespace tunescope::onnx
