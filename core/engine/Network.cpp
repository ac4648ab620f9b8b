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
      fail(ErrorKind::usage, "model ", model_name_, ": layer ", layer->name(), " reads node ", input,
           " which does not exist yet");
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
    node.output = Tensor(node.shape, setup.layout);
  }
  for (size_t i = 1; i < nodes_.size(); ++i) {
    Node& node = nodes_[i];
    node.grad = Tensor(node.shape, setup.layout);
    if (node.consumers > 1) node.grad_scratch = Tensor(node.shape, setup.layout);
  }
  built_ = true;
}

const Tensor& Network::output_of(int node, const Tensor& input) const {
  return node == kInput ? input : nodes_[node].output;
}

const Tensor& Network::forward(const LayerContext& ctx, const Tensor& input, bool training) {
  if (!built_) fail(ErrorKind::runtime, "model ", model_name_, ": forward before build");
  if (!(input.shape() == input_shape_) || input.layout() != layout_)
    fail(ErrorKind::runtime, "model ", model_name_, ": input ", input.shape().str(), " ",
         to_string(input.layout()), " does not match the built ", input_shape_.str(), " ",
         to_string(layout_));
  RangeScope phase(ctx.exec.tracer, "forward", RangeCategory::phase, ctx.exec.device, ctx.exec.lane);
  std::vector<const Tensor*> inputs;
  for (size_t i = 1; i < nodes_.size(); ++i) {
    Node& node = nodes_[i];
    inputs.clear();
    for (int in : node.inputs) inputs.push_back(&output_of(in, input));
    RangeScope layer(ctx.exec.tracer, traced_name(ctx.exec, node.layer->name()), RangeCategory::layer,
                     ctx.exec.device, ctx.exec.lane);
    node.layer->forward(ctx, inputs, node.output, training);
  }
  return nodes_.back().output;
}

void Network::backward(const LayerContext& ctx, const Tensor& input, const Tensor& dlogits) {
  if (!built_) fail(ErrorKind::runtime, "model ", model_name_, ": backward before build");
  RangeScope phase(ctx.exec.tracer, "backward", RangeCategory::phase, ctx.exec.device, ctx.exec.lane);
  // A node's gradient is overwritten by the first consumer visited (in reverse order)
  // and accumulated by the others through its scratch buffer.
  std::vector<bool> written(nodes_.size(), false);
  std::vector<const Tensor*> inputs;
  std::vector<Tensor*> dinputs;
  std::vector<int> pending_accumulate;
  for (size_t i = nodes_.size() - 1; i >= 1; --i) {
    Node& node = nodes_[i];
    const bool is_last = i == nodes_.size() - 1;
    if (!is_last && !written[i]) continue;  // does not reach the loss
    const Tensor& doutput = is_last ? dlogits : node.grad;
    inputs.clear();
    dinputs.clear();
    pending_accumulate.clear();
    for (int in : node.inputs) {
      inputs.push_back(&output_of(in, input));
      if (in == kInput) {
        dinputs.push_back(nullptr);
      } else if (!written[in]) {
        dinputs.push_back(&nodes_[in].grad);
        written[in] = true;
      } else {
        dinputs.push_back(&nodes_[in].grad_scratch);
        pending_accumulate.push_back(in);
      }
    }
    {
      RangeScope layer(ctx.exec.tracer, traced_name(ctx.exec, node.layer->name()),
                       RangeCategory::layer, ctx.exec.device, ctx.exec.lane);
      node.layer->backward(ctx, inputs, node.output, doutput, dinputs);
      for (int in : pending_accumulate) ctx.ops.accumulate(ctx.exec, nodes_[in].grad_scratch, nodes_[in].grad);
    }
  }
}

std::vector<Parameter*> Network::parameters() {
  std::vector<Parameter*> all;
  for (size_t i = 1; i < nodes_.size(); ++i)
    for (Parameter* p : nodes_[i].layer->parameters()) all.push_back(p);
  return all;
}

size_t Network::workspace_bytes() const {
  size_t most = 0;
  for (size_t i = 1; i < nodes_.size(); ++i) most = std::max(most, nodes_[i].layer->workspace_bytes());
  return most;
}

double Network::forward_flops() const {
  double total = 0;
  for (size_t i = 1; i < nodes_.size(); ++i) total += nodes_[i].layer->forward_flops();
  return total;
}

Shape4 Network::output_shape() const { return nodes_.back().shape; }

}  // namespace tunescope
