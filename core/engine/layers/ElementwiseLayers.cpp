#include "core/engine/layers/ElementwiseLayers.h"

#include "core/base/Error.h"

namespace tunescope {

Shape4 ReluLayer::configure(const std::vector<Shape4>& inputs, const LayerSetup&) {
  if (inputs.size() != 1) fail(ErrorKind::usage, "layer ", name(), ": relu takes one input");
  return inputs[0];
}

void ReluLayer::forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                        Tensor& output, bool) {
  ctx.ops.relu_forward(ctx.exec, *inputs[0], output);
}

void ReluLayer::backward(const LayerContext& ctx, const std::vector<const Tensor*>&,
                         const Tensor& output, const Tensor& doutput,
                         const std::vector<Tensor*>& dinputs) {
  if (dinputs[0]) ctx.ops.relu_backward(ctx.exec, output, doutput, *dinputs[0]);
}

Shape4 AddLayer::configure(const std::vector<Shape4>& inputs, const LayerSetup&) {
  if (inputs.size() != 2 || !(inputs[0] == inputs[1]))
    fail(ErrorKind::usage, "layer ", name(), ": add needs two inputs of one shape, got ",
         inputs.size() > 0 ? inputs[0].str() : "",
         inputs.size() > 1 ? " and " + inputs[1].str() : "");
  return inputs[0];
}

void AddLayer::forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                       Tensor& output, bool) {
  ctx.ops.add(ctx.exec, *inputs[0], *inputs[1], output);
}

void AddLayer::backward(const LayerContext& ctx, const std::vector<const Tensor*>&, const Tensor&,
                        const Tensor& doutput, const std::vector<Tensor*>& dinputs) {
  for (Tensor* dinput : dinputs)
    if (dinput) ctx.ops.copy(ctx.exec, doutput, *dinput);
}

}  // namespace tunescope
