#include "core/engine/layers/ActivationLayers.h"

#include "core/base/Error.h"

namespace tunescope {

namespace {

Shape4 one_input(const Layer& layer, const std::vector<Shape4>& inputs) {
  if (inputs.size() != 1)
    fail(ErrorKind::usage, "layer ", layer.name(), ": ", layer.kind(), " takes one input");
  return inputs[0];
}

}  // namespace

Shape4 ActivationLayer::configure(const std::vector<Shape4>& inputs, const LayerSetup&) {
  return one_input(*this, inputs);
}

void ActivationLayer::forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                              Tensor& output, bool) {
  ctx.ops.activation_forward(ctx.exec, params_, *inputs[0], output);
}

void ActivationLayer::backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                               const Tensor& output, const Tensor& doutput,
                               const std::vector<Tensor*>& dinputs) {
  if (dinputs[0])
    ctx.ops.activation_backward(ctx.exec, params_, *inputs[0], output, doutput, *dinputs[0]);
}

std::string ScaleLayer::describe() const { return cat("scale x", factor_); }

Shape4 ScaleLayer::configure(const std::vector<Shape4>& inputs, const LayerSetup&) {
  return one_input(*this, inputs);
}

void ScaleLayer::forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                         Tensor& output, bool) {
  ctx.ops.scale(ctx.exec, factor_, *inputs[0], output);
}

void ScaleLayer::backward(const LayerContext& ctx, const std::vector<const Tensor*>&, const Tensor&,
                          const Tensor& doutput, const std::vector<Tensor*>& dinputs) {
  if (dinputs[0]) ctx.ops.scale(ctx.exec, factor_, doutput, *dinputs[0]);
}

Shape4 ConcatLayer::configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) {
  if (inputs.size() < 2)
    fail(ErrorKind::usage, "layer ", name(), ": concat takes at least two inputs");
  Shape4 out = inputs[0];
  out.c = 0;
  input_shapes_ = inputs;
  layout_ = setup.layout;
  memory_ = setup.memory;
  discarded_.assign(inputs.size(), Tensor());
  for (const Shape4& in : inputs) {
    if (in.n != out.n || in.h != out.h || in.w != out.w)
      fail(ErrorKind::usage, "layer ", name(), ": concat joins inputs of one n, h and w, got ",
           inputs[0].str(), " and ", in.str());
    out.c += in.c;
  }
  return out;
}

void ConcatLayer::forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                          Tensor& output, bool) {
  ctx.ops.concat_channels(ctx.exec, inputs, output);
}

void ConcatLayer::backward(const LayerContext& ctx, const std::vector<const Tensor*>&,
                           const Tensor&, const Tensor& doutput,
                           const std::vector<Tensor*>& dinputs) {
  std::vector<Tensor*> parts(dinputs);
  for (size_t i = 0; i < parts.size(); ++i)
    if (!parts[i]) {
      if (discarded_[i].empty()) discarded_[i] = Tensor(input_shapes_[i], layout_, *memory_);
      parts[i] = &discarded_[i];
    }
  ctx.ops.split_channels(ctx.exec, doutput, parts);
}

}  // namespace tunescope
