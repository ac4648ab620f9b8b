#include "core/engine/layers/LinearLayer.h"

#include "core/base/Error.h"
#include "core/engine/ParameterInit.h"

namespace tunescope {

std::string LinearLayer::describe() const {
  return cat("fc ", input_.item_count(), "->", out_features_);
}

Shape4 LinearLayer::configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) {
  if (inputs.size() != 1) fail(ErrorKind::usage, "layer ", name(), ": fc takes one input");
  if (out_features_ <= 0) fail(ErrorKind::usage, "layer ", name(), ": fc needs > 0 outputs");
  input_ = inputs[0];
  // The weight mirrors the input's (c, h, w) in the input's layout: see OpKernels::fc_forward.
  weight_ =
      make_parameter(name() + ".weight", {out_features_, input_.c, input_.h, input_.w}, setup);
  init_he_normal(weight_.value, input_.item_count(), parameter_seed(setup.seed, weight_.name));
  bias_ = make_parameter(name() + ".bias", {1, out_features_, 1, 1}, setup);
  return {input_.n, out_features_, 1, 1};
}

void LinearLayer::forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                          Tensor& output, bool) {
  ctx.ops.fc_forward(ctx.exec, *inputs[0], weight_.value, bias_.value, output);
}

void LinearLayer::backward_parameters(const LayerContext& ctx,
                                      const std::vector<const Tensor*>& inputs, const Tensor&,
                                      const Tensor& doutput) {
  ctx.ops.fc_backward_weight(ctx.exec, *inputs[0], doutput, weight_.grad, bias_.grad);
}

void LinearLayer::backward_data(const LayerContext& ctx, const std::vector<const Tensor*>&,
                                const Tensor&, const Tensor& doutput,
                                const std::vector<Tensor*>& dinputs) {
  if (dinputs[0]) ctx.ops.fc_backward_data(ctx.exec, doutput, weight_.value, *dinputs[0]);
}

double LinearLayer::forward_flops() const {
  return 2.0 * static_cast<double>(input_.n * input_.item_count() * out_features_);
}

}  // namespace tunescope
