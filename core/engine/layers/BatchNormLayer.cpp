#include "core/engine/layers/BatchNormLayer.h"

#include "core/base/Error.h"
#include "core/engine/ParameterInit.h"

namespace tunescope {

void BatchNormLayer::configure_parameters(const Shape4& input, const LayerSetup& setup) {
  const Shape4 channels{1, input.c, 1, 1};
  gamma_ = make_parameter(parameter_prefix_ + ".gamma", channels, setup);
  gamma_.value.fill(1.0f);
  beta_ = make_parameter(parameter_prefix_ + ".beta", channels, setup);
  running_mean_ = Tensor(channels, setup.layout, *setup.memory);
  running_var_ = Tensor(channels, setup.layout, *setup.memory);
  running_var_.fill(1.0f);
  saved_.mean = Tensor(channels, setup.layout, *setup.memory);
  saved_.inv_std = Tensor(channels, setup.layout, *setup.memory);
}

Shape4 BatchNormLayer::configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) {
  if (inputs.size() != 1) fail(ErrorKind::usage, "layer ", name(), ": batch norm takes one input");
  configure_parameters(inputs[0], setup);
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
  if (!dinputs[0])
    fail(ErrorKind::usage, "layer ", name(), ": batch norm on the data input is not supported");
  ctx.ops.batchnorm_backward(ctx.exec, *inputs[0], doutput, gamma_.value, saved_, *dinputs[0],
                             gamma_.grad, beta_.grad);
}

Shape4 BatchNormReluLayer::configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) {
  const size_t expected = residual_ ? 2 : 1;
  if (inputs.size() != expected)
    fail(ErrorKind::usage, "layer ", name(), ": ", kind(), " takes ", expected, " input",
         residual_ ? "s" : "");
  if (residual_ && !(inputs[0] == inputs[1]))
    fail(ErrorKind::usage, "layer ", name(), ": the residual input ", inputs[1].str(),
         " does not match ", inputs[0].str());
  configure_parameters(inputs[0], setup);
  return inputs[0];
}

void BatchNormReluLayer::forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                                 Tensor& output, bool training) {
  const Tensor* residual = residual_ ? inputs[1] : nullptr;
  if (training) {
    ctx.ops.batchnorm_relu_forward_train(ctx.exec, params_, *inputs[0], gamma_.value, beta_.value,
                                         residual, running_mean_, running_var_, saved_, output);
    return;
  }
  // Evaluation is not what fusion is for: the plain kernels in sequence.
  ctx.ops.batchnorm_forward_infer(ctx.exec, params_, *inputs[0], gamma_.value, beta_.value,
                                  running_mean_, running_var_, output);
  if (residual) ctx.ops.add(ctx.exec, output, *residual, output);
  ctx.ops.relu_forward(ctx.exec, output, output);
}

void BatchNormReluLayer::backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                                  const Tensor& output, const Tensor& doutput,
                                  const std::vector<Tensor*>& dinputs) {
  if (!dinputs[0])
    fail(ErrorKind::usage, "layer ", name(), ": batch norm on the data input is not supported");
  ctx.ops.batchnorm_relu_backward(ctx.exec, *inputs[0], output, doutput, gamma_.value, saved_,
                                  *dinputs[0], gamma_.grad, beta_.grad,
                                  residual_ ? dinputs[1] : nullptr);
}

}  // namespace tunescope
