// Small ONNX graphs written by the tests with libonnx's protobuf classes: a valid base
// model each refusal test changes in one place, and the zoo's reference files.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace tunescope::test_support {

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

// ||v||, in double.
inline double l2(const std::vector<float>& v) {
  double sum = 0;
  for (const float x : v) sum += double{x} * x;
  return std::sqrt(sum);
}

// ||ours - reference|| / max(||reference||, floor), in double.
inline double relative_l2(const std::vector<float>& ours, const std::vector<float>& reference,
                          double floor = 1e-30) {
  EXPECT_EQ(ours.size(), reference.size());
  double diff = 0;
  for (size_t i = 0; i < std::min(ours.size(), reference.size()); ++i)
    diff += (double{ours[i]} - reference[i]) * (double{ours[i]} - reference[i]);
  return std::sqrt(diff) / std::max(l2(reference), floor);
}

}  // namespace tunescope::test_support
