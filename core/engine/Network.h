// A training graph: layers wired as a DAG (residual nets need fan-out and joins), run
// forward in insertion order and backward in reverse. Node 0 is the data input.
// Every activation and gradient buffer is allocated once, at build().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/engine/Layer.h"

namespace tunescope {

class Network {
 public:
  static constexpr int kInput = 0;

  explicit Network(std::string model_name) : model_name_(std::move(model_name)) {}

  // Appends a layer fed by earlier nodes; returns its node id.
  int add(std::unique_ptr<Layer> layer, std::vector<int> inputs);
  // Appends a layer fed by the previously added node (or the input).
  int chain(std::unique_ptr<Layer> layer);

  // Configures every layer for `input` and allocates all buffers. Throws Error(usage)
  // naming the layer whose shapes do not fit.
  void build(Shape4 input, const LayerSetup& setup);

  // Runs every layer; returns the last node's output (the logits).
  const Tensor& forward(const LayerContext& ctx, const Tensor& input, bool training);
  // Back-propagates d(loss)/d(logits) through every layer, filling parameter gradients.
  void backward(const LayerContext& ctx, const Tensor& input, const Tensor& dlogits);

  std::vector<Parameter*> parameters();
  // The largest workspace any layer needs: layers of one lane run one at a time and share it.
  size_t workspace_bytes() const;
  double forward_flops() const;

  const std::string& model_name() const { return model_name_; }
  Shape4 input_shape() const { return input_shape_; }
  Layout layout() const { return layout_; }
  Shape4 output_shape() const;
  int layer_count() const { return static_cast<int>(nodes_.size()) - 1; }
  const Layer& layer(int node) const { return *nodes_.at(node).layer; }
  Layer& layer(int node) { return *nodes_.at(node).layer; }
  const std::vector<int>& inputs_of(int node) const { return nodes_.at(node).inputs; }

 private:
  struct Node {
    std::unique_ptr<Layer> layer;  // null for the input node
    std::vector<int> inputs;
    Shape4 shape;
    Tensor output;
    Tensor grad;
    Tensor grad_scratch;  // only for nodes with several consumers: one contribution at a time
    int consumers = 0;
  };
  const Tensor& output_of(int node, const Tensor& input) const;

  std::string model_name_;
  std::vector<Node> nodes_ = std::vector<Node>(1);
  Shape4 input_shape_{0, 0, 0, 0};
  Layout layout_ = Layout::NCHW;
  bool built_ = false;
};

}  // namespace tunescope
