// Small ONNX graphs written by the tests with libonnx's protobuf classes: a valid base
// model each refusal test changes in one place, and the zoo's reference files.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace tunescope::testing {

// x [N, 3, 8, 8] -> Conv "conv" (4 filters 3x3, pad 1, bias) -> Relu "relu" ->
// GlobalAveragePool "gap" -> Flatten "flatten" -> Gemm "fc" (5 classes, transB) ->
// Softmax "softmax".
struct TinyOnnx {
  ::onnx::ModelProto proto;
  ::onnx::GraphProto& graph;

  TinyOnnx();
  ::onnx::NodeProto& node(const std::string& name);
  ::onnx::TensorProto& initializer(const std::string& name);
  ::onnx::AttributeProto& set_ints(::onnx::NodeProto& node, const std::string& name,
                                   std::initializer_list<int64_t> values);
  ::onnx::AttributeProto& fresh_attribute(::onnx::NodeProto& node, const std::string& name);
  ::onnx::AttributeProto& set_int(::onnx::NodeProto& node, const std::string& name, int64_t value);
  // Adds a float initializer of `dims` with values 0.01 * i - 0.3 * ...: deterministic, varied.
  ::onnx::TensorProto& add_initializer(const std::string& name, std::vector<int64_t> dims);
  ::onnx::NodeProto& add_node(const std::string& op, const std::string& name,
                              std::vector<std::string> inputs, std::vector<std::string> outputs);
  std::string save(const std::filesystem::path& path) const;
};

// The tensors of a `<model>.reference.onnx` (models/zoo/make-zoo.py).
struct ZooReference {
  std::map<std::string, std::vector<float>> floats;
  std::map<std::string, std::vector<int64_t>> dims;
  std::vector<int32_t> labels;
};
ZooReference read_zoo_reference(const std::filesystem::path& path);

}  // namespace tunescope::testing
