#include "tests/models/onnx/OnnxTestModels.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tunescope::test_support {

namespace pb = ::onnx;

namespace {

void set_shape(pb::ValueInfoProto& value, const std::string& name, std::vector<int64_t> dims) {
  value.set_name(name);
  auto* tensor = value.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(pb::TensorProto::FLOAT);
  for (const int64_t d : dims) {
    auto* dim = tensor->mutable_shape()->add_dim();
    if (d > 0)
      dim->set_dim_value(d);
    else
      dim->set_dim_param("batch");
  }
}

}  // namespace

TinyOnnx::TinyOnnx() : graph(*proto.mutable_graph()) {
  proto.set_ir_version(8);
  proto.add_opset_import()->set_version(13);
  graph.set_name("tiny");
  set_shape(*graph.add_input(), "x", {0, 3, 8, 8});
  set_shape(*graph.add_output(), "probabilities", {0, 5});
  add_initializer("conv.w", {4, 3, 3, 3});
  add_initializer("conv.b", {4});
  add_initializer("fc.w", {5, 4});
  add_initializer("fc.b", {5});
  auto& conv = add_node("Conv", "conv", {"x", "conv.w", "conv.b"}, {"c"});
  set_ints(conv, "kernel_shape", {3, 3});
  set_ints(conv, "pads", {1, 1, 1, 1});
  set_ints(conv, "strides", {1, 1});
  add_node("Relu", "relu", {"c"}, {"r"});
  add_node("GlobalAveragePool", "gap", {"r"}, {"g"});
  set_int(add_node("Flatten", "flatten", {"g"}, {"f"}), "axis", 1);
  set_int(add_node("Gemm", "fc", {"f", "fc.w", "fc.b"}, {"logits"}), "transB", 1);
  set_int(add_node("Softmax", "softmax", {"logits"}, {"probabilities"}), "axis", 1);
}

pb::NodeProto& TinyOnnx::node(const std::string& name) {
  for (auto& n : *graph.mutable_node())
    if (n.name() == name) return n;
  throw std::runtime_error("no node " + name);
}

pb::TensorProto& TinyOnnx::initializer(const std::string& name) {
  for (auto& t : *graph.mutable_initializer())
    if (t.name() == name) return t;
  throw std::runtime_error("no initializer " + name);
}

// Replaces the attribute: an earlier one of that name is deleted, not changed in place
// (changing the ints of an existing AttributeProto read back stale values at -O3).
pb::AttributeProto& TinyOnnx::fresh_attribute(pb::NodeProto& node, const std::string& name) {
  auto& attributes = *node.mutable_attribute();
  for (int i = attributes.size() - 1; i >= 0; --i)
    if (attributes.Get(i).name() == name) attributes.DeleteSubrange(i, 1);
  pb::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  return a;
}

pb::AttributeProto& TinyOnnx::set_ints(pb::NodeProto& node, const std::string& name,
                                       std::initializer_list<int64_t> values) {
  pb::AttributeProto& a = fresh_attribute(node, name);
  a.set_type(pb::AttributeProto::INTS);
  for (const int64_t v : values) a.add_ints(v);
  return a;
}

pb::AttributeProto& TinyOnnx::set_int(pb::NodeProto& node, const std::string& name, int64_t value) {
  pb::AttributeProto& a = fresh_attribute(node, name);
  a.set_type(pb::AttributeProto::INT);
  a.set_i(value);
  return a;
}

pb::TensorProto& TinyOnnx::add_initializer(const std::string& name, std::vector<int64_t> dims) {
  auto& t = *graph.add_initializer();
  t.set_name(name);
  t.set_data_type(pb::TensorProto::FLOAT);
  int64_t count = 1;
  for (const int64_t d : dims) {
    t.add_dims(d);
    count *= d;
  }
  for (int64_t i = 0; i < count; ++i)
    t.add_float_data(0.05f * static_cast<float>((i * 7) % 13) - 0.3f);
  return t;
}

pb::NodeProto& TinyOnnx::add_node(const std::string& op, const std::string& name,
                                  std::vector<std::string> inputs,
                                  std::vector<std::string> outputs) {
  auto& n = *graph.add_node();
  n.set_op_type(op);
  n.set_name(name);
  for (const auto& i : inputs) n.add_input(i);
  for (const auto& o : outputs) n.add_output(o);
  return n;
}

std::string TinyOnnx::save(const std::filesystem::path& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  proto.SerializeToOstream(&out);
  return path.string();
}

ZooReference read_zoo_reference(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  pb::ModelProto proto;
  if (!in || !proto.ParseFromIstream(&in))
    throw std::runtime_error("cannot read reference " + path.string());
  ZooReference ref;
  for (const auto& t : proto.graph().initializer()) {
    int64_t count = 1;
    for (const int64_t d : t.dims()) count *= d;
    ref.dims[t.name()] = {t.dims().begin(), t.dims().end()};
    if (t.data_type() == pb::TensorProto::INT64) {
      std::vector<int64_t> values(static_cast<size_t>(count));
      std::memcpy(values.data(), t.raw_data().data(), values.size() * sizeof(int64_t));
      ref.labels.assign(values.begin(), values.end());
      continue;
    }
    std::vector<float> values(static_cast<size_t>(count));
    if (!t.raw_data().empty())
      std::memcpy(values.data(), t.raw_data().data(), values.size() * sizeof(float));
    else
      values.assign(t.float_data().begin(), t.float_data().end());
    ref.floats[t.name()] = std::move(values);
  }
  return ref;
}

}  // namespace tunescope::test_support
