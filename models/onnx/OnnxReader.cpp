// Reads an ONNX ModelProto with Debian's libonnx (its generated protobuf classes) and
// turns its graph into a LayerPlan list, tracking every value's shape as it goes so
// that each refusal can name the node that causes it.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "core/base/Error.h"
#include "models/onnx/OnnxModel.h"
#include "models/onnx/OnnxNodeFields.h"

namespace tunescope::onnx {

namespace {

// A value of the graph as our network computes it: the output of node `node`, with its
// logical (c, h, w). Flatten/Reshape keep the node and mark it 2-D: our fully connected
// layer flattens (c, h, w) itself, in the order ONNX's Flatten does.
struct Value {
  int node = 0;
  Shape4 shape{1, 0, 0, 0};
  bool flat = false;
  bool softmaxed = false;  // after the final Softmax: nothing may consume it
  // Zero padding of a Pad node not yet applied: the Conv or AveragePool that consumes the
  // value takes it as its own padding (PyTorch exports AvgPool2d as Pad + AveragePool).
  int64_t pad_h = 0, pad_w = 0;
};

const char* const kSupported =
    "Conv (grouped and depthwise too), BatchNormalization, Relu, LeakyRelu, Sigmoid, Tanh, "
    "MaxPool, AveragePool, GlobalAveragePool, Add, Mul (by a constant), Concat (channels), "
    "Flatten, Reshape (to 2-D), Gemm, MatMul, Dropout, Identity, Constant, Pad (zeros, before "
    "Conv or AveragePool), and Softmax or LogSoftmax at the end";

class GraphReader : NodeFields {
 public:
  GraphReader(std::string path, const pb::GraphProto& graph)
      : NodeFields(std::move(path)), graph_(graph) {}

  OnnxModel read() {
    model_.path = path_;
    for (const auto& init : graph_.initializer()) constants_[init.name()] = &init;
    read_input();
    for (int i = 0; i < graph_.node_size(); ++i) read_node(graph_.node(i), i);
    read_output();
    return std::move(model_);
  }

 private:
  // --- values and constants ------------------------------------------------------

  void read_input() {
    const pb::ValueInfoProto* input = nullptr;
    for (const auto& candidate : graph_.input()) {
      if (constants_.count(candidate.name()))
        continue;  // older exporters list initializers as inputs
      if (input)
        refuse("the graph has several data inputs ('", input->name(), "', '", candidate.name(),
               "'); tunescope trains a model with one image input");
      input = &candidate;
    }
    if (!input) refuse("the graph has no data input");
    const auto& type = input->type();
    if (!type.has_tensor_type()) refuse("graph input '", input->name(), "' is not a tensor");
    check_float(type.tensor_type().elem_type(), cat("graph input '", input->name(), "'"));
    const auto& dims = type.tensor_type().shape().dim();
    if (dims.size() != 4)
      refuse("graph input '", input->name(), "' has ", dims.size(),
             " dimensions; tunescope takes images N x C x H x W");
    int64_t sizes[4] = {1, 0, 0, 0};
    for (int d = 1; d < 4; ++d) {
      if (!dims[d].has_dim_value() || dims[d].dim_value() <= 0)
        refuse("graph input '", input->name(), "': dimension ", d, " (", "CHW"[d - 1],
               ") must be a fixed positive size");
      sizes[d] = dims[d].dim_value();
    }
    if (dims[0].has_dim_value() && dims[0].dim_value() > 0) sizes[0] = dims[0].dim_value();
    if (sizes[1] > kMaxInputChannels || sizes[2] > kMaxInputSide || sizes[3] > kMaxInputSide ||
        sizes[1] * sizes[2] * sizes[3] > kMaxInputElements)
      refuse("graph input '", input->name(), "' is ", sizes[1], "x", sizes[2], "x", sizes[3],
             "; at most ", kMaxInputChannels, " channels, ", kMaxInputSide, "x", kMaxInputSide,
             " and ", kMaxInputElements, " values per image are taken");
    model_.input = {sizes[0], sizes[1], sizes[2], sizes[3]};
    values_[input->name()] = Value{Network::kInput, {1, sizes[1], sizes[2], sizes[3]}};
  }

  const Value& value(const pb::NodeProto& node, int index) const {
    if (index >= node.input_size() || node.input(index).empty())
      refuse_node(node, "input ", index, " is missing");
    const std::string& name = node.input(index);
    const auto it = values_.find(name);
    if (it == values_.end()) {
      if (const auto dropped = dropped_.find(name); dropped != dropped_.end())
        refuse_node(node, "input '", name, "' is ", dropped->second,
                    ", which tunescope does not compute");
      if (constants_.count(name))
        refuse_node(node, "input ", index, " ('", name,
                    "') is a constant where tunescope needs an activation");
      refuse_node(node, "input '", name,
                  "' is produced by no earlier node (the file is truncated or not sorted)");
    }
    if (it->second.softmaxed)
      refuse_node(node,
                  "consumes the output of a Softmax/LogSoftmax; tunescope takes those only at the "
                  "end of the graph");
    if ((it->second.pad_h || it->second.pad_w) && node.op_type() != "Conv" &&
        node.op_type() != "AveragePool")
      refuse_node(node,
                  "consumes the output of a Pad; tunescope takes Pad only right before Conv or "
                  "AveragePool");
    return it->second;
  }

  const pb::TensorProto& constant(const pb::NodeProto& node, int index, const char* role) const {
    if (index >= node.input_size() || node.input(index).empty())
      refuse_node(node, "the ", role, " is missing");
    const auto it = constants_.find(node.input(index));
    if (it == constants_.end())
      refuse_node(node, "the ", role, " ('", node.input(index),
                  "') must be an initializer or a constant; "
                  "tunescope trains weights it owns");
    return *it->second;
  }

  bool has_input(const pb::NodeProto& node, int index) const {
    return index < node.input_size() && !node.input(index).empty();
  }

  // The tensor's float values in logical order; `shape` gives the dimensions we expect.
  // --- nodes ------------------------------------------------------------------------

  std::string unique_name(const pb::NodeProto& node, int index) {
    std::string name = node.name().empty() ? cat(node.op_type(), "_", index) : node.name();
    for (int k = 2; !names_.insert(name).second; ++k)
      name = cat(node.name().empty() ? node.op_type() : node.name(), "#", k);
    return name;
  }

  void define(const pb::NodeProto& node, Value v) {
    if (node.output_size() < 1 || node.output(0).empty()) refuse_node(node, "has no output");
    values_[node.output(0)] = v;
    for (int i = 1; i < node.output_size(); ++i)
      if (!node.output(i).empty())
        dropped_[node.output(i)] = cat("output ", i, " of node '", node_name_, "'");
  }

  int add_layer(LayerPlan plan) {
    model_.layers.push_back(std::move(plan));
    return static_cast<int>(model_.layers.size());  // node id: layer i is node i + 1
  }

  LayerPlan plan_for(const pb::NodeProto& node, LayerKind kind, std::vector<int> inputs) const {
    LayerPlan plan;
    plan.kind = kind;
    plan.name = node_name_;
    plan.op_type = node.op_type();
    plan.inputs = std::move(inputs);
    return plan;
  }

  const Value& spatial_input(const pb::NodeProto& node) const {
    const Value& in = value(node, 0);
    if (in.flat)
      refuse_node(node, "input is 2-D (after Flatten/Reshape); ", node.op_type(),
                  " needs N x C x H x W");
    return in;
  }

  void read_node(const pb::NodeProto& node, int index) {
    node_name_ = unique_name(node, index);
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      refuse_node(node, "operator domain '", node.domain(),
                  "' is not supported (only the standard ONNX operators)");
    const std::string& op = node.op_type();
    if (op == "Conv") return conv(node);
    if (op == "BatchNormalization") return batch_norm(node);
    if (op == "Relu") return unary(node, LayerKind::relu);
    if (op == "LeakyRelu" || op == "Sigmoid" || op == "Tanh") return activation(node);
    if (op == "Mul") return mul(node);
    if (op == "Concat") return concat(node);
    if (op == "MaxPool" || op == "AveragePool") return pool(node);
    if (op == "GlobalAveragePool") return unary(node, LayerKind::global_avg_pool);
    if (op == "Add") return add(node);
    if (op == "Flatten" || op == "Reshape") return flatten(node);
    if (op == "Gemm" || op == "MatMul") return linear(node);
    if (op == "Dropout" || op == "Identity") {
      only_attributes(node,
                      {"seed", "ratio",
                       "is_test"});  // Dropout is the identity in our training (no random masks)
      return define(node, value(node, 0));
    }
    if (op == "Softmax" || op == "LogSoftmax") {
      only_attributes(node, {"axis"});
      Value v = value(node, 0);
      if (!v.flat && (v.shape.h != 1 || v.shape.w != 1))
        refuse_node(node, "takes a 4-D input; only [N, classes] is supported");
      if (int_attribute(node, "axis", -1) != 1 && int_attribute(node, "axis", -1) != -1)
        refuse_node(node, "attribute axis must be 1 (the classes)");
      v.softmaxed = true;  // our softmax cross-entropy replaces it
      return define(node, v);
    }
    if (op == "Pad") return pad(node);
    if (op == "Constant") {
      only_attributes(node, {"value"});
      const auto* a = attribute(node, "value");
      if (!a || a->type() != pb::AttributeProto::TENSOR)
        refuse_node(node, "only tensor constants (attribute value) are supported");
      if (node.output_size() < 1) refuse_node(node, "has no output");
      constants_[node.output(0)] = &a->t();
      return;
    }
    refuse_node(node, "operator ", op, " is not supported (supported: ", kSupported, ")");
  }

  void unary(const pb::NodeProto& node, LayerKind kind) {
    only_attributes(node, {});
    // Relu is elementwise: it also takes the 2-D output of a fully connected layer.
    Value v = kind == LayerKind::relu ? value(node, 0) : spatial_input(node);
    const int id = add_layer(plan_for(node, kind, {v.node}));
    if (kind == LayerKind::global_avg_pool) v.shape.h = v.shape.w = 1;
    define(node, Value{id, v.shape, v.flat});
  }

  void activation(const pb::NodeProto& node) {
    const std::string& op = node.op_type();
    if (op == "LeakyRelu")
      only_attributes(node, {"alpha"});
    else
      only_attributes(node, {});
    const Value v = value(node, 0);  // elementwise: 2-D values too
    LayerPlan plan = plan_for(node, LayerKind::activation, {v.node});
    plan.activation.kind = op == "LeakyRelu" ? Activation::leaky_relu
                           : op == "Sigmoid" ? Activation::sigmoid
                                             : Activation::tanh;
    plan.activation.alpha = float_attribute(node, "alpha", 0.01f);
    if (!std::isfinite(plan.activation.alpha))
      refuse_node(node, "attribute alpha = ", plan.activation.alpha, " is not finite");
    define(node, Value{add_layer(std::move(plan)), v.shape, v.flat});
  }

  // An activation times a constant of one element (a scale); any other product is refused.
  void mul(const pb::NodeProto& node) {
    only_attributes(node, {});
    if (node.input_size() != 2)
      refuse_node(node, "takes ", node.input_size(), " inputs; 2 are expected");
    const bool first_constant = constants_.count(node.input(0)) > 0;
    const bool second_constant = constants_.count(node.input(1)) > 0;
    if (first_constant == second_constant)
      refuse_node(node, first_constant
                            ? "multiplies two constants; tunescope computes activations"
                            : "multiplies two activations; tunescope takes Mul by a constant only");
    const int factor_index = first_constant ? 0 : 1;
    const pb::TensorProto& factor = constant(node, factor_index, "factor");
    check_float_initializer(node, factor);
    if (element_count(node, factor) != 1)
      refuse_node(node, "the factor '", factor.name(), "' has ", element_count(node, factor),
                  " elements; tunescope takes Mul by a single number (no broadcasting)");
    const float f = file_tensor(node, factor, {1, 1, 1, 1}).values[0];
    if (!std::isfinite(f)) refuse_node(node, "the factor '", factor.name(), "' is not finite");
    const Value v = value(node, 1 - factor_index);
    LayerPlan plan = plan_for(node, LayerKind::scale, {v.node});
    plan.factor = f;
    define(node, Value{add_layer(std::move(plan)), v.shape, v.flat});
  }

  // Concatenation along the channels of images of one height and width.
  void concat(const pb::NodeProto& node) {
    only_attributes(node, {"axis"});
    if (!attribute(node, "axis")) refuse_node(node, "attribute axis is missing");
    const int64_t axis = int_attribute(node, "axis", 1);
    if (axis != 1 && axis != -3)
      refuse_node(node, "attribute axis = ", axis,
                  " is not supported: tunescope concatenates channels (axis 1) only");
    if (node.input_size() < 2)
      refuse_node(node, "takes ", node.input_size(), " inputs; at least 2 are expected");
    std::vector<int> inputs;
    Shape4 shape{1, 0, 0, 0};
    for (int i = 0; i < node.input_size(); ++i) {
      if (constants_.count(node.input(i)))
        refuse_node(node, "concatenating a constant ('", node.input(i), "') is not supported");
      const Value& v = value(node, i);
      if (v.flat)
        refuse_node(node, "input ", i, " is 2-D (after Flatten/Reshape); Concat joins images");
      if (i > 0 && (v.shape.h != shape.h || v.shape.w != shape.w))
        refuse_node(node, "joins ", shape.h, "x", shape.w, " and ", v.shape.h, "x", v.shape.w,
                    " images; the inputs must have one height and width");
      shape.h = v.shape.h;
      shape.w = v.shape.w;
      shape.c += v.shape.c;
      inputs.push_back(v.node);
    }
    define(node, Value{add_layer(plan_for(node, LayerKind::concat, std::move(inputs))), shape});
  }

  // Pad with zeros, the same on both sides of each spatial axis, nothing on N and C.
  void pad(const pb::NodeProto& node) {
    only_attributes(node, {"mode"});
    if (const auto* mode = attribute(node, "mode"); mode && mode->s() != "constant")
      refuse_node(node, "mode '", mode->s(), "' is not supported: only zero padding (constant)");
    if (has_input(node, 2)) {
      const pb::TensorProto& value = constant(node, 2, "padding value");
      check_float_initializer(node, value);
      const FileTensor v = file_tensor(node, value, {1, 1, 1, element_count(node, value)});
      if (v.values.size() != 1 || v.values[0] != 0.0f)
        refuse_node(node, "only zero padding is supported");
    }
    if (has_input(node, 3)) refuse_node(node, "input axes is not supported");
    Value v = value(node, 0);
    if (v.flat) refuse_node(node, "pads a 2-D value; only N x C x H x W images are padded");
    const auto p = int_values(node, constant(node, 1, "pads"));
    // [n_begin, c_begin, h_begin, w_begin, n_end, c_end, h_end, w_end]
    if (p.size() != 8 || p[0] || p[1] || p[4] || p[5] || p[2] != p[6] || p[3] != p[7] || p[2] < 0 ||
        p[3] < 0 || p[2] > kMaxInputSide || p[3] > kMaxInputSide)
      refuse_node(node, "pads must be zero on N and C and the same on both sides of H and W");
    v.pad_h += p[2];
    v.pad_w += p[3];
    define(node, v);
  }

  void conv(const pb::NodeProto& node) {
    only_attributes(node, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
    no_auto_pad(node);
    const Value in = spatial_input(node);
    const int64_t group = int_attribute(node, "group", 1);
    if (group < 1 || group > in.shape.c || in.shape.c % group != 0)
      refuse_node(node, "attribute group = ", group, " does not divide the input's ", in.shape.c,
                  " channels");
    const auto dilations = pair_attribute(node, "dilations", 1);
    if (dilations != std::pair<int64_t, int64_t>{1, 1})
      refuse_node(node, "attribute dilations = [", dilations.first, ", ", dilations.second,
                  "] is not supported: tunescope's convolutions are undilated");
    const pb::TensorProto& w = constant(node, 1, "weight");
    const auto wd = dims_of(w);
    if (wd.size() != 4)
      refuse_node(node, "weight '", w.name(), "' has ", wd.size(), " dimensions; 4 are expected");
    if (wd[1] * group != in.shape.c)
      refuse_node(node, "weight '", w.name(), "' takes ", wd[1], " input channels", " per group (",
                  group, " groups) but the input has ", in.shape.c);
    if (wd[0] < 1 || wd[0] % group != 0)
      refuse_node(node, "weight '", w.name(), "' has ", wd[0], " filters, not a multiple of the ",
                  group, " groups");
    const auto kernel = pair_attribute(node, "kernel_shape", wd[2]);
    if (kernel.first != wd[2] || kernel.second != wd[3])
      refuse_node(node, "attribute kernel_shape does not match weight '", w.name(), "'");
    const auto strides = pair_attribute(node, "strides", 1);
    auto pads = pads_attribute(node);
    pads.first += in.pad_h;  // a Pad node before it
    pads.second += in.pad_w;
    if (kernel.first != kernel.second || strides.first != strides.second ||
        pads.first != pads.second)
      refuse_node(node, "kernel ", kernel.first, "x", kernel.second, ", strides ", strides.first,
                  "x", strides.second, ", pads ", pads.first, "x", pads.second,
                  " are not supported: tunescope's convolutions are square");
    if (in.shape.h + 2 * pads.first < kernel.first || in.shape.w + 2 * pads.second < kernel.second)
      refuse_node(node, "kernel ", kernel.first, "x", kernel.second, " does not fit the ",
                  in.shape.h, "x", in.shape.w, " input");
    LayerPlan plan = plan_for(node, LayerKind::conv, {in.node});
    plan.conv =
        Conv2dSpec{wd[0], kernel.first, strides.first, pads.first, has_input(node, 2), group};
    plan.weights["weight"] = file_tensor(node, w, {wd[0], wd[1], wd[2], wd[3]});
    if (plan.conv.bias)
      plan.weights["bias"] = file_tensor(node, constant(node, 2, "bias"), {1, wd[0], 1, 1});
    const ConvProblem p{in.shape,       wd[0],      kernel.first, kernel.second, strides.first,
                        strides.second, pads.first, pads.second,  Layout::NCHW,  group};
    define(node, Value{add_layer(std::move(plan)), p.output()});
  }

  void batch_norm(const pb::NodeProto& node) {
    only_attributes(node, {"epsilon", "momentum", "training_mode", "spatial"});
    if (int_attribute(node, "spatial", 1) != 1)
      refuse_node(node, "attribute spatial = 0 is not supported");
    const Value in = spatial_input(node);
    LayerPlan plan = plan_for(node, LayerKind::batch_norm, {in.node});
    plan.batch_norm.epsilon = float_attribute(node, "epsilon", 1e-5f);
    // ONNX: running = momentum * running + (1 - momentum) * batch; ours weighs the batch by
    // momentum.
    plan.batch_norm.momentum = 1.0f - float_attribute(node, "momentum", 0.9f);
    if (!(plan.batch_norm.epsilon > 0) ||
        !(plan.batch_norm.momentum >= 0 && plan.batch_norm.momentum <= 1))
      refuse_node(node, "attribute epsilon or momentum is out of range");
    const Shape4 channels{1, in.shape.c, 1, 1};
    const char* roles[] = {"gamma", "beta", "running_mean", "running_var"};
    for (int i = 0; i < 4; ++i)
      plan.weights[roles[i]] = file_tensor(node, constant(node, i + 1, roles[i]), channels);
    define(node, Value{add_layer(std::move(plan)), in.shape});
  }

  void pool(const pb::NodeProto& node) {
    const bool max = node.op_type() == "MaxPool";
    if (max)
      only_attributes(node, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads",
                             "storage_order", "strides"});
    else
      only_attributes(
          node, {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"});
    no_auto_pad(node);
    require_int(node, "ceil_mode", 0, 0, "tunescope's pooling rounds output sizes down");
    if (max) {
      require_int(node, "storage_order", 0, 0, "only row-major indices");
      if (pair_attribute(node, "dilations", 1) != std::pair<int64_t, int64_t>{1, 1})
        refuse_node(node, "attribute dilations is not supported: tunescope's pooling is undilated");
    }
    const Value in = spatial_input(node);
    if (!attribute(node, "kernel_shape")) refuse_node(node, "attribute kernel_shape is missing");
    const auto kernel = pair_attribute(node, "kernel_shape", 1);
    const auto strides = pair_attribute(node, "strides", 1);
    auto pads = pads_attribute(node);
    if (!max && (pads.first || pads.second))
      require_int(node, "count_include_pad", 0, 1,
                  "tunescope's average pooling counts the padding (count_include_pad = 1)");
    // Zeros from a Pad node before it are counted like our own padding is.
    pads.first += in.pad_h;
    pads.second += in.pad_w;
    LayerPlan plan = plan_for(node, max ? LayerKind::max_pool : LayerKind::avg_pool, {in.node});
    plan.pool = PoolParams{kernel.first,   kernel.second, strides.first,
                           strides.second, pads.first,    pads.second};
    if (in.shape.h + 2 * pads.first < kernel.first || in.shape.w + 2 * pads.second < kernel.second)
      refuse_node(node, "kernel ", kernel.first, "x", kernel.second, " does not fit the ",
                  in.shape.h, "x", in.shape.w, " input");
    const Shape4 out = plan.pool.output(in.shape);
    define(node, Value{add_layer(std::move(plan)), out});
  }

  void add(const pb::NodeProto& node) {
    only_attributes(node, {});
    if (node.input_size() != 2)
      refuse_node(node, "takes ", node.input_size(), " inputs; 2 are expected");
    for (int i = 0; i < 2; ++i)
      if (constants_.count(node.input(i)))
        refuse_node(node, "adding a constant ('", node.input(i),
                    "') is not supported; Add joins two activations");
    const Value a = value(node, 0);
    const Value b = value(node, 1);
    if (a.shape.c != b.shape.c || a.shape.h != b.shape.h || a.shape.w != b.shape.w ||
        a.flat != b.flat)
      refuse_node(node, "adds ", a.shape.c, "x", a.shape.h, "x", a.shape.w, " to ", b.shape.c, "x",
                  b.shape.h, "x", b.shape.w, "; broadcasting is not supported");
    if (a.flat) refuse_node(node, "adding 2-D values is not supported");
    define(node, Value{add_layer(plan_for(node, LayerKind::add, {a.node, b.node})), a.shape});
  }

  void flatten(const pb::NodeProto& node) {
    Value v = value(node, 0);
    if (node.op_type() == "Flatten") {
      only_attributes(node, {"axis"});
      if (int_attribute(node, "axis", 1) != 1)
        refuse_node(node, "attribute axis must be 1 (keep the batch)");
    } else {
      only_attributes(node, {"allowzero"});
      const auto shape = int_values(node, constant(node, 1, "shape"));
      const int64_t features = v.shape.item_count();
      const bool keeps_batch =
          shape.size() == 2 && (shape[0] == -1 || shape[0] == 0 || shape[0] == model_.input.n);
      if (!keeps_batch || (shape[1] != features && !(shape[1] == -1 && shape[0] != -1)))
        refuse_node(node, "reshapes to [", shape.size() > 0 ? cat(shape[0]) : "",
                    shape.size() > 1 ? cat(", ", shape[1]) : "", shape.size() > 2 ? ", ..." : "",
                    "]; only [N, ", features, "] (flattening each image) is supported");
    }
    v.flat = true;
    define(node, v);
  }

  void linear(const pb::NodeProto& node) {
    const bool gemm = node.op_type() == "Gemm";
    const Value in = value(node, 0);
    if (!in.flat && (in.shape.h != 1 || in.shape.w != 1))
      refuse_node(node, "input is ", in.shape.c, "x", in.shape.h, "x", in.shape.w,
                  "; flatten it to 2-D first");
    const int64_t features = in.shape.item_count();
    const pb::TensorProto& w = constant(node, 1, "weight");
    const auto wd = dims_of(w);
    if (wd.size() != 2)
      refuse_node(node, "weight '", w.name(), "' has ", wd.size(), " dimensions; 2 are expected");
    bool trans_b = false;
    if (gemm) {
      only_attributes(node, {"alpha", "beta", "transA", "transB"});
      if (float_attribute(node, "alpha", 1) != 1.0f || float_attribute(node, "beta", 1) != 1.0f)
        refuse_node(node, "attributes alpha and beta must be 1");
      require_int(node, "transA", 0, 0, "the activation must not be transposed");
      trans_b = int_attribute(node, "transB", 0) != 0;
    } else {
      only_attributes(node, {});
    }
    const int64_t in_w = trans_b ? wd[1] : wd[0];
    const int64_t out_features = trans_b ? wd[0] : wd[1];
    if (in_w != features)
      refuse_node(node, "weight '", w.name(), "' takes ", in_w, " features but the input has ",
                  features);
    LayerPlan plan = plan_for(node, LayerKind::linear, {in.node});
    plan.out_features = out_features;
    plan.bias = gemm && has_input(node, 2);
    // Our weight is logical {OUT, C, H, W}: ONNX's [OUT, C*H*W] (transB) row by row.
    FileTensor weight = file_tensor(node, w, {out_features, in.shape.c, in.shape.h, in.shape.w});
    if (!trans_b) {
      weight.transposed = true;
      std::vector<float> transposed(weight.values.size());
      for (int64_t i = 0; i < features; ++i)
        for (int64_t o = 0; o < out_features; ++o)
          transposed[static_cast<size_t>(o * features + i)] =
              weight.values[static_cast<size_t>(i * out_features + o)];
      weight.values = std::move(transposed);
    }
    plan.weights["weight"] = std::move(weight);
    if (plan.bias) {
      const pb::TensorProto& b = constant(node, 2, "bias");
      const auto bd = dims_of(b);
      if (!(bd.size() == 1 || (bd.size() == 2 && bd[0] == 1)))
        refuse_node(node, "bias '", b.name(), "' must be [", out_features,
                    "]; broadcasting over the batch is not supported");
      plan.weights["bias"] = file_tensor(node, b, {1, out_features, 1, 1});
    }
    define(node, Value{add_layer(std::move(plan)), {1, out_features, 1, 1}, true});
  }

  void read_output() {
    if (graph_.output_size() != 1)
      refuse("the graph has ", graph_.output_size(),
             " outputs; tunescope trains a model with one output (the class scores)");
    const auto& out = graph_.output(0);
    if (out.type().has_tensor_type())
      check_float(out.type().tensor_type().elem_type(), cat("graph output '", out.name(), "'"));
    const auto it = values_.find(out.name());
    if (it == values_.end())
      refuse("graph output '", out.name(), "' is produced by no node tunescope computes");
    const Value& v = it->second;
    if (v.node == Network::kInput) refuse("graph output '", out.name(), "' is the input itself");
    if (v.node != static_cast<int>(model_.layers.size()))
      refuse("graph output '", out.name(), "' comes from node '",
             model_.layers[static_cast<size_t>(v.node - 1)].name,
             "', not from the last layer; tunescope takes the last layer's output as the class "
             "scores");
    if (v.shape.h != 1 || v.shape.w != 1)
      refuse("graph output '", out.name(), "' is ", v.shape.c, "x", v.shape.h, "x", v.shape.w,
             "; tunescope needs class scores [N, classes]");
    model_.classes = v.shape.c;
  }

  const pb::GraphProto& graph_;
  OnnxModel model_;
  std::map<std::string, const pb::TensorProto*> constants_;
  std::map<std::string, Value> values_;
  std::map<std::string, std::string> dropped_;  // outputs we do not compute -> what they are
  std::set<std::string> names_;
};

}  // namespace

OnnxModel read_onnx_model(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) fail(ErrorKind::input, "model ", path, ": cannot read: ", ec.message());
  if (static_cast<int64_t>(size) > kMaxFileBytes)
    fail(ErrorKind::input, "model ", path, ": ", size, " bytes; at most ", kMaxFileBytes,
         " are read");
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<size_t>(size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size)))
    fail(ErrorKind::input, "model ", path, ": cannot read ", size, " bytes");
  pb::ModelProto proto;
  if (!proto.ParseFromString(bytes))
    fail(ErrorKind::input, "model ", path,
         ": not a valid ONNX file (corrupt or truncated protobuf)");
  if (!proto.has_graph() || proto.graph().node_size() == 0)
    fail(ErrorKind::input, "model ", path,
         ": not an ONNX model (no graph; an empty, corrupt or truncated file)");
  // The operators' meaning depends on the opset: a model must name it (a file cut short
  // after its graph loses it).
  const bool has_opset =
      std::any_of(proto.opset_import().begin(), proto.opset_import().end(), [](const auto& o) {
        return (o.domain().empty() || o.domain() == "ai.onnx") && o.version() > 0;
      });
  if (!has_opset)
    fail(ErrorKind::input, "model ", path,
         ": no opset for the standard ONNX operators (a truncated or incomplete file)");
  return GraphReader(path, proto.graph()).read();
}

}  // namespace tunescope::onnx
