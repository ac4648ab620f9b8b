#include "core/engine/layers/PoolingLayers.h"

#include "core/base/Error.h"
#include "core/engine/ParameterInit.h"

namespace tunescope {

namespace {
Shape4 pooled_shape(const Layer& layer, const std::vector<Shape4>& inputs,
                    const PoolParams& params) {
  if (inputs.size() != 1)
    fail(ErrorKind::usage, "layer ", layer.name(), ": pooling takes one input");
  try {
    return params.output(inputs[0]);
  } catch (const Error& e) {
    fail(ErrorKind::usage, "layer ", layer.name(), ": ", e.what());
  }
}
}  // namespace

Shape4 MaxPoolLayer::configure(const std::vector<Shape4>& inputs, const LayerSetup&) {
  return pooled_shape(*this, inputs, params_);
}

void MaxPoolLayer::forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                           Tensor& output, bool) {
  ctx.ops.maxpool_forward(ctx.exec, params_, *inputs[0], output);
}

void MaxPoolLayer::backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                            const Tensor&, const Tensor& doutput,
                            const std::vector<Tensor*>& dinputs) {
  if (dinputs[0]) ctx.ops.maxpool_backward(ctx.exec, params_, *inputs[0], doutput, *dinputs[0]);
}

Shape4 BiasReluMaxPoolLayer::configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) {
  const Shape4 out = pooled_shape(*this, inputs, params_);
  bias_ = make_parameter(bias_name_, {1, inputs[0].c, 1, 1}, setup);  // zero, as a conv's bias
  return out;
}

void BiasReluMaxPoolLayer::forward(const LayerContext& ctx,
                                   const std::vector<const Tensor*>& inputs, Tensor& output, bool) {
  ctx.ops.bias_relu_maxpool_forward(ctx.exec, params_, *inputs[0], bias_.value, output);
}

void BiasReluMaxPoolLayer::backward(const LayerContext& ctx,
                                    const std::vector<const Tensor*>& inputs, const Tensor& output,
                                    const Tensor& doutput, const std::vector<Tensor*>& dinputs) {
  // The kernel writes dx and dbias together, so it needs somewhere to put dx.
  if (!dinputs[0])
    fail(ErrorKind::usage, "layer ", name(), ": ", kind(), " on the data input is not supported");
  ctx.ops.bias_relu_maxpool_backward(ctx.exec, params_, *inputs[0], bias_.value, output, doutput,
                                     *dinputs[0], bias_.grad);
}

Shape4 AvgPoolLayer::configure(const std::vector<Shape4>& inputs, const LayerSetup&) {
  return pooled_shape(*this, inputs, params_);
}

void AvgPoolLayer::forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                           Tensor& output, bool) {
  ctx.ops.avgpool_forward(ctx.exec, params_, *inputs[0], output);
}

void AvgPoolLayer::backward(const LayerContext& ctx, const std::vector<const Tensor*>&,
                            const Tensor&, const Tensor& doutput,
                            const std::vector<Tensor*>& dinputs) {
  if (dinputs[0]) ctx.ops.avgpool_backward(ctx.exec, params_, doutput, *dinputs[0]);
}

Shape4 GlobalAvgPoolLayer::configure(const std::vector<Shape4>& inputs, const LayerSetup&) {
  if (inputs.size() != 1) fail(ErrorKind::usage, "layer ", name(), ": global pool takes one input");
  return {inputs[0].n, inputs[0].c, 1, 1};
}

void GlobalAvgPoolLayer::forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                                 Tensor& output, bool) {
  ctx.ops.global_avgpool_forward(ctx.exec, *inputs[0], output);
}

void GlobalAvgPoolLayer::backward(const LayerContext& ctx, const std::vector<const Tensor*>&,
                                  const Tensor&, const Tensor& doutput,
                                  const std::vector<Tensor*>& dinputs) {
  if (dinputs[0]) ctx.ops.global_avgpool_backward(ctx.exec, doutput, *dinputs[0]);
}

}  // namespace tunescope
