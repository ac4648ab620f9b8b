#include "core/engine/Network.h"

#include <algorithm>

#include "core/base/Error.h"
#include "profiler/Tracer.h"

namespace tunescope {

namespace {
using profiler::RangeCategory;
using profiler::RangeScope;

const char* traced_name(const ExecContext& exec, const std::string& name) {
  return exec.tracer ? exec.tracer->intern(name) : nullptr;
}
}  // namespace

int Network::add(std::unique_ptr<Layer> layer, std::vector<int> inputs) {
  if (built_) fail(ErrorKind::runtime, "model ", model_name_, ": cannot add layers after build");
  const int id = static_cast<int>(nodes_.size());
  for (int input : inputs)
    if (input < 0 || input >= id)
      fail(ErrorKind::usage, "model ", model_name_, ": layer ", layer->name(), " reads node ",
           input, " which does not exist yet");
  Node node;
  node.layer = std::move(layer);
  node.inputs = std::move(inputs);
  nodes_.push_back(std::move(node));
  return id;
}

int Network::chain(std::unique_ptr<Layer> layer) {
  const int previous = static_cast<int>(nodes_.size()) - 1;
  return add(std::move(layer), {previous});
}

void Network::build(Shape4 input, const LayerSetup& setup) {
  if (nodes_.size() < 2) fail(ErrorKind::usage, "model ", model_name_, " has no layers");
  input_shape_ = input;
  layout_ = setup.layout;
  nodes_[kInput].shape = input;
  for (size_t i = 1; i < nodes_.size(); ++i) {
    Node& node = nodes_[i];
    std::vector<Shape4> shapes;
    for (int in : node.inputs) {
      shapes.push_back(nodes_[in].shape);
      ++nodes_[in].consumers;
    }
    node.shape = node.layer->configure(shapes, setup);
    node.output = Tensor(node.shape, setup.layout, *setup.memory);
  }
  for (size_t i = 1; i < nodes_.size(); ++i) {
    Node& node = nodes_[i];
    node.grad = Tensor(node.shape, setup.layout, *setup.memory);
    if (node.consumers > 1) node.grad_scratch = Tensor(node.shape, setup.layout, *setup.memory);
  }
  plan_backward();
  built_ = true;
}

void Network::plan_backward() {
  backward_steps_.clear();
  std::vector<bool> written(nodes_.size(), false);
  for (size_t i = nodes_.size() - 1; i >= 1; --i) {
    const bool is_last = i == nodes_.size() - 1;
    if (!is_last && !written[i]) continue;  // does not reach the loss
    BackwardStep step;
    step.node = static_cast<int>(i);
    for (int in : nodes_[i].inputs) {
      if (in == kInput) {
        step.dinputs.push_back(nullptr);
      } else if (!written[in]) {
        step.dinputs.push_back(&nodes_[in].grad);
        written[in] = true;
      } else {
        step.dinputs.push_back(&nodes_[in].grad_scratch);
        step.accumulate_into.push_back(in);
      }
    }
    backward_steps_.push_back(std::move(step));
  }
}

const Tensor& Network::output_of(int node, const Tensor& input) const {
  return node == kInput ? input : nodes_[node].output;
}

std::vector<const Tensor*> Network::inputs_for(int node, const Tensor& input) const {
  std::vector<const Tensor*> inputs;
  for (int in : nodes_[node].inputs) inputs.push_back(&output_of(in, input));
  return inputs;
}

const Tensor& Network::output_gradient(int node, const Tensor& dlogits) const {
  return node == static_cast<int>(nodes_.size()) - 1 ? dlogits : nodes_[node].grad;
}

void Network::forward_node(const LayerContext& ctx, int node, const Tensor& input, bool training) {
  Node& n = nodes_.at(node);
  RangeScope layer(ctx.exec.tracer, traced_name(ctx.exec, n.layer->name()), RangeCategory::layer,
                   ctx.exec.device, ctx.exec.lane);
  n.layer->forward(ctx, inputs_for(node, input), n.output, training);
}

void Network::backward_step(const LayerContext& ctx, const BackwardStep& step, const Tensor& input,
                            const Tensor& dlogits, BackwardPart part) {
  Node& node = nodes_.at(step.node);
  Layer& layer = *node.layer;
  if (part != BackwardPart::all && !layer.separable_backward())
    fail(ErrorKind::runtime, "layer ", layer.name(),
         ": its backward pass cannot be split into data and parameters");
  RangeScope range(ctx.exec.tracer, traced_name(ctx.exec, layer.name()), RangeCategory::layer,
                   ctx.exec.device, ctx.exec.lane);
  const auto inputs = inputs_for(step.node, input);
  const Tensor& doutput = output_gradient(step.node, dlogits);
  switch (part) {
    case BackwardPart::all: layer.backward(ctx, inputs, node.output, doutput, step.dinputs); break;
    case BackwardPart::data:
      static_cast<SeparableLayer&>(layer).backward_data(ctx, inputs, node.output, doutput,
                                                        step.dinputs);
      break;
    case BackwardPart::parameters:
      static_cast<SeparableLayer&>(layer).backward_parameters(ctx, inputs, node.output, doutput);
      return;  // the fan-out accumulation belongs to the input gradients
  }
  for (int in : step.accumulate_into)
    ctx.ops.accumulate(ctx.exec, nodes_[in].grad_scratch, nodes_[in].grad);
}

const Tensor& Network::forward(const LayerContext& ctx, const Tensor& input, bool training) {
  if (!built_) fail(ErrorKind::runtime, "model ", model_name_, ": forward before build");
  check_input(input);
  RangeScope phase(ctx.exec.tracer, "forward", RangeCategory::phase, ctx.exec.device,
                   ctx.exec.lane);
  for (int node = 1; node < static_cast<int>(nodes_.size()); ++node)
    forward_node(ctx, node, input, training);
  return nodes_.back().output;
}

void Network::check_input(const Tensor& input) const {
  if (!(input.shape() == input_shape_) || input.layout() != layout_)
    fail(ErrorKind::runtime, "model ", model_name_, ": input ", input.shape().str(), " ",
         to_string(input.layout()), " does not match the built ", input_shape_.str(), " ",
         to_string(layout_));
}

void Network::backward(const LayerContext& ctx, const Tensor& input, const Tensor& dlogits) {
  if (!built_) fail(ErrorKind::runtime, "model ", model_name_, ": backward before build");
  RangeScope phase(ctx.exec.tracer, "backward", RangeCategory::phase, ctx.exec.device,
                   ctx.exec.lane);
  for (const BackwardStep& step : backward_steps_)
    backward_step(ctx, step, input, dlogits, BackwardPart::all);
}

std::vector<Parameter*> Network::parameters() {
  std::vector<Parameter*> all;
  for (size_t i = 1; i < nodes_.size(); ++i)
    for (Parameter* p : nodes_[i].layer->parameters()) all.push_back(p);
  return all;
}

size_t Network::workspace_bytes() const {
  size_t most = 0;
  for (size_t i = 1; i < nodes_.size(); ++i)
    most = std::max(most, nodes_[i].layer->workspace_bytes());
  return most;
}

size_t Network::saved_bytes() const {
  size_t total = 0;
  for (size_t i = 1; i < nodes_.size(); ++i) total += nodes_[i].layer->saved_bytes();
  return total;
}

double Network::forward_flops() const {
  double total = 0;
  for (size_t i = 1; i < nodes_.size(); ++i) total += nodes_[i].layer->forward_flops();
  return total;
}

Shape4 Network::output_shape() const { return nodes_.back().shape; }

}  // namespace tunescope
