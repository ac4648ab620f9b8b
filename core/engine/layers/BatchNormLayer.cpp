#include "core/engine/layers/BatchNormLayer.h"

#include "core/base/Error.h"
#include "core/engine/ParameterInit.h"

namespace tunescope {

Shape4 BatchNormLayer::configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) {
  if (inputs.size() != 1) fail(ErrorKind::usage, "layer ", name(), ": batch norm takes one input");
  const Shape4 channels{1, inputs[0].c, 1, 1};
  gamma_ = make_parameter(name() + ".gamma", channels, setup);
  gamma_.value.fill(1.0f);
  beta_ = make_parameter(name() + ".beta", channels, setup);
  running_mean_ = Tensor(channels, setup.layout, *setup.memory);
  running_var_ = Tensor(channels, setup.layout, *setup.memory);
  running_var_.fill(1.0f);
  saved_.mean = Tensor(channels, setup.layout, *setup.memory);
  saved_.inv_std = Tensor(channels, setup.layout, *setup.memory);
  return inputs[0];
}

void BatchNormLayer::forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                             Tensor& output, bool training) {
  if (training)
    ctx.ops.batchnorm_forward_train(ctx.exec, params_, *inputs[0], gamma_.value, beta_.value,
                                    running_mean_, running_var_, saved_, output);
  else
    ctx.ops.batchnorm_forward_infer(ctx.exec, params_, *inputs[0], gamma_.value, beta_.value,
                                    running_mean_, running_var_, output);
}

void BatchNormLayer::backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                              const Tensor&, const Tensor& doutput,
                              const std::vector<Tensor*>& dinputs) {
  // The kernel computes dx together with dgamma and dbeta, so it needs somewhere to put dx.
  if (!dinputs[0]) fail(ErrorKind::usage, "layer ", name(), ": batch norm on the data input is not supported");
  ctx.ops.batchnorm_backward(ctx.exec, *inputs[0], doutput, gamma_.value, saved_, *dinputs[0],
                             gamma_.grad, beta_.grad);
}

}  // namespace tunescope
