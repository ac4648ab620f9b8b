// Reading one ONNX node's attributes and initializers for the ONNX reader; whatever it
// cannot take is refused with Error(input) naming the file, the node and its operator.
#pragma once

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/base/Error.h"
#include "models/onnx/OnnxModel.h"

namespace tunescope::onnx {

namespace pb = ::onnx;

class NodeFields {
 public:
  explicit NodeFields(std::string path) : path_(std::move(path)) {}

 protected:
  template <typename... Parts>
  [[noreturn]] void refuse(const Parts&... parts) const {
    fail(ErrorKind::input, "model ", path_, ": ", parts...);
  }
  template <typename... Parts>
  [[noreturn]] void refuse_node(const pb::NodeProto& node, const Parts&... parts) const {
    refuse("node '", node_name_, "' (", node.op_type(), "): ", parts...);
  }

  void check_float(int32_t elem_type, const std::string& what) const {
    if (elem_type != pb::TensorProto::FLOAT)
      refuse(what, " has element type ",
             pb::TensorProto::DataType_Name(static_cast<pb::TensorProto::DataType>(elem_type)),
             "; tunescope trains float32 models only");
  }

  // --- initializers -----------------------------------------------------------------

  FileTensor file_tensor(const pb::NodeProto& node, const pb::TensorProto& t, Shape4 shape) const {
    const std::string what = cat("initializer '", t.name(), "'");
    if (t.data_location() == pb::TensorProto::EXTERNAL)
      refuse_node(node, what, " keeps its data in an external file, which tunescope does not read");
    check_float_initializer(node, t);
    const int64_t count = element_count(node, t);
    if (count != shape.count())
      refuse_node(node, what, " has ", count, " elements where ", shape.str(), " (", shape.count(),
                  ") are needed");
    FileTensor out{t.name(), shape, {}};
    if (!t.raw_data().empty()) {
      if (static_cast<int64_t>(t.raw_data().size()) != count * 4)
        refuse_node(node, what, " holds ", t.raw_data().size(), " bytes of data for ", count,
                    " floats");
      out.values.resize(static_cast<size_t>(count));
      std::memcpy(out.values.data(), t.raw_data().data(),
                  t.raw_data().size());  // little-endian, as ONNX stores it
    } else {
      if (t.float_data_size() != count)
        refuse_node(node, what, " holds ", t.float_data_size(), " floats for ", count, " elements");
      out.values.assign(t.float_data().begin(), t.float_data().end());
    }
    return out;
  }

  void check_float_initializer(const pb::NodeProto& node, const pb::TensorProto& t) const {
    if (t.data_type() != pb::TensorProto::FLOAT)
      refuse_node(
          node, "initializer '", t.name(), "' has element type ",
          pb::TensorProto::DataType_Name(static_cast<pb::TensorProto::DataType>(t.data_type())),
          "; tunescope trains float32 models only");
  }

  int64_t element_count(const pb::NodeProto& node, const pb::TensorProto& t) const {
    int64_t count = 1;
    for (const int64_t d : t.dims()) {
      if (d < 0 || (d > 0 && count > std::numeric_limits<int32_t>::max() / d))
        refuse_node(node, "initializer '", t.name(), "' has an invalid dimension ", d);
      count *= d;
    }
    return count;
  }

  std::vector<int64_t> dims_of(const pb::TensorProto& t) const {
    return {t.dims().begin(), t.dims().end()};
  }

  // Integer values of a constant (Reshape's shape).
  std::vector<int64_t> int_values(const pb::NodeProto& node, const pb::TensorProto& t) const {
    if (t.data_type() != pb::TensorProto::INT64)
      refuse_node(node, "the shape '", t.name(), "' is not int64");
    const int64_t count = element_count(node, t);
    std::vector<int64_t> out;
    if (!t.raw_data().empty()) {
      if (static_cast<int64_t>(t.raw_data().size()) != count * 8)
        refuse_node(node, "the shape '", t.name(), "' is truncated");
      out.resize(static_cast<size_t>(count));
      std::memcpy(out.data(), t.raw_data().data(), t.raw_data().size());
    } else {
      if (t.int64_data_size() != count)
        refuse_node(node, "the shape '", t.name(), "' is truncated");
      out.assign(t.int64_data().begin(), t.int64_data().end());
    }
    return out;
  }

  // --- attributes -------------------------------------------------------------------

  const pb::AttributeProto* attribute(const pb::NodeProto& node, const char* name) const {
    for (const auto& a : node.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  void only_attributes(const pb::NodeProto& node, std::initializer_list<const char*> known) const {
    for (const auto& a : node.attribute())
      if (std::none_of(known.begin(), known.end(), [&](const char* k) { return a.name() == k; }))
        refuse_node(node, "attribute '", a.name(), "' is not supported");
  }
  int64_t int_attribute(const pb::NodeProto& node, const char* name, int64_t fallback) const {
    const auto* a = attribute(node, name);
    if (!a) return fallback;
    if (a->type() != pb::AttributeProto::INT)
      refuse_node(node, "attribute '", name, "' is not an integer");
    return a->i();
  }
  float float_attribute(const pb::NodeProto& node, const char* name, float fallback) const {
    const auto* a = attribute(node, name);
    if (!a) return fallback;
    if (a->type() != pb::AttributeProto::FLOAT)
      refuse_node(node, "attribute '", name, "' is not a float");
    return a->f();
  }
  std::vector<int64_t> ints_attribute(const pb::NodeProto& node, const char* name,
                                      std::vector<int64_t> fallback) const {
    const auto* a = attribute(node, name);
    if (!a) return fallback;
    if (a->type() != pb::AttributeProto::INTS)
      refuse_node(node, "attribute '", name, "' is not a list of integers");
    return {a->ints().begin(), a->ints().end()};
  }
  void require_int(const pb::NodeProto& node, const char* name, int64_t fallback, int64_t wanted,
                   const char* why) const {
    const int64_t v = int_attribute(node, name, fallback);
    if (v != wanted) refuse_node(node, "attribute ", name, " = ", v, " is not supported: ", why);
  }
  void no_auto_pad(const pb::NodeProto& node) const {
    const auto* a = attribute(node, "auto_pad");
    if (a && a->s() != "NOTSET" && a->s() != "VALID")
      refuse_node(node, "attribute auto_pad = ", a->s(),
                  " is not supported: export with explicit pads");
  }
  // Spatial pair from a 2-element attribute (kernel_shape, strides, dilations).
  std::pair<int64_t, int64_t> pair_attribute(const pb::NodeProto& node, const char* name,
                                             int64_t fallback) const {
    const auto v = ints_attribute(node, name, {fallback, fallback});
    if (v.size() != 2)
      refuse_node(node, "attribute ", name, " has ", v.size(),
                  " values; tunescope takes 2-D images");
    if (v[0] <= 0 || v[1] <= 0 || v[0] > kMaxInputSide || v[1] > kMaxInputSide)
      refuse_node(node, "attribute ", name, " = [", v[0], ", ", v[1], "] is out of range");
    return {v[0], v[1]};
  }
  // pads = [top, left, bottom, right]: our kernels pad both sides alike.
  std::pair<int64_t, int64_t> pads_attribute(const pb::NodeProto& node) const {
    const auto v = ints_attribute(node, "pads", {0, 0, 0, 0});
    if (v.size() != 4)
      refuse_node(node, "attribute pads has ", v.size(), " values; 4 are expected");
    if (v[0] != v[2] || v[1] != v[3])
      refuse_node(node, "attribute pads = [", v[0], ", ", v[1], ", ", v[2], ", ", v[3],
                  "] is not supported: tunescope pads both sides of an axis alike");
    if (v[0] < 0 || v[1] < 0 || v[0] > kMaxInputSide || v[1] > kMaxInputSide)
      refuse_node(node, "attribute pads is out of range");
    return {v[0], v[1]};
  }

  std::string path_;
  std::string node_name_;  // of the node being read (made unique)
};

}  // namespace tunescope::onnx
