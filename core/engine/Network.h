// A training graph: layers wired as a DAG (residual nets need fan-out and joins), run
// forward in insertion order and backward in reverse. Node 0 is the data input.
// Every activation and gradient buffer is allocated once, at build().
// forward()/backward() run the whole graph on one lane; an executor that places layers
// on several lanes runs the same per-node steps (forward_node, backward_steps) itself.
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

  // Throws Error(runtime) unless `input` has the built shape and layout.
  void check_input(const Tensor& input) const;
  // Runs every layer; returns the last node's output (the logits).
  const Tensor& forward(const LayerContext& ctx, const Tensor& input, bool training);
  // Back-propagates d(loss)/d(logits) through every layer, filling parameter gradients.
  void backward(const LayerContext& ctx, const Tensor& input, const Tensor& dlogits);

  // One node's part of the backward pass. Which buffer each input gradient goes to is
  // fixed by the graph, so the plan is made once at build(): the first consumer visited
  // (in reverse order) overwrites a node's gradient, later ones write the node's scratch
  // buffer and accumulate it.
  struct BackwardStep {
    int node = 0;
    std::vector<Tensor*> dinputs;      // null for the data input
    std::vector<int> accumulate_into;  // nodes whose scratch this step fills
  };
  // The steps in execution order (last node first); nodes that do not reach the loss
  // are left out.
  const std::vector<BackwardStep>& backward_steps() const { return backward_steps_; }

  // The parts of forward()/backward() for one node (a layer range each, traced on ctx's
  // lane). What a BackwardStep runs: all of the layer's backward, or only its input
  // gradients (plus the fan-out accumulation) or only its parameter gradients when the
  // layer's backward is separable.
  enum class BackwardPart { all, data, parameters };
  void forward_node(const LayerContext& ctx, int node, const Tensor& input, bool training);
  void backward_step(const LayerContext& ctx, const BackwardStep& step, const Tensor& input,
                     const Tensor& dlogits, BackwardPart part);
  // d(loss)/d(output of node): the buffer a step's layer reads as doutput.
  const Tensor& output_gradient(int node, const Tensor& dlogits) const;

  std::vector<Parameter*> parameters();
  // The largest workspace any layer needs: layers of one lane run one at a time and share it.
  size_t workspace_bytes() const;
  // What the layers keep from forward to backward (Layer::saved_bytes), summed.
  size_t saved_bytes() const;
  double forward_flops() const;

  const std::string& model_name() const { return model_name_; }
  Shape4 input_shape() const { return input_shape_; }
  Layout layout() const { return layout_; }
  Shape4 output_shape() const;
  const Tensor& logits() const { return nodes_.back().output; }
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
  std::vector<const Tensor*> inputs_for(int node, const Tensor& input) const;
  void plan_backward();

  std::string model_name_;
  std::vector<Node> nodes_ = std::vector<Node>(1);
  Shape4 input_shape_{0, 0, 0, 0};
  Layout layout_ = Layout::NCHW;
  std::vector<BackwardStep> backward_steps_;
  bool built_ = false;
};

}  // namespace tunescope
