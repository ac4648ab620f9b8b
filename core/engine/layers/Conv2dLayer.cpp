#include "core/engine/layers/Conv2dLayer.h"

#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/engine/ParameterInit.h"

namespace tunescope {

Conv2dLayer::Conv2dLayer(std::string name, Conv2dSpec spec, std::string algorithm)
    : SeparableLayer(std::move(name)), spec_(spec), algorithm_name_(std::move(algorithm)) {}

std::string Conv2dLayer::describe() const {
  return cat(spec_.kernel, "x", spec_.kernel, "/", spec_.stride, " ", problem_.input.c, "->",
             spec_.out_channels, spec_.groups > 1 ? cat(" groups ", spec_.groups) : "", " ",
             algorithm_name_);
}

Shape4 Conv2dLayer::configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) {
  if (inputs.size() != 1) fail(ErrorKind::usage, "layer ", name(), ": conv takes one input");
  problem_ =
      ConvProblem{inputs[0],    spec_.out_channels, spec_.kernel, spec_.kernel, spec_.stride,
                  spec_.stride, spec_.pad,          spec_.pad,    setup.layout, spec_.groups};
  try {
    problem_.validate();
  } catch (const Error& e) {
    fail(ErrorKind::usage, "layer ", name(), ": ", e.what());
  }
  backend_ = setup.backend;
  knobs_ = setup.knobs;
  memory_ = setup.memory;
  set_aside_.clear();
  algorithm_ = made_for_problem(algorithm_name_);
  saved_ = saved_for(*algorithm_);

  weight_ = make_parameter(name() + ".weight", problem_.filter(), setup);
  init_he_normal(weight_.value, problem_.filter().item_count(),  // fan-in: one group's inputs
                 parameter_seed(setup.seed, weight_.name));
  if (spec_.bias) bias_ = make_parameter(name() + ".bias", {1, spec_.out_channels, 1, 1}, setup);
  return problem_.output();
}

std::unique_ptr<ConvAlgorithm> Conv2dLayer::made_for_problem(const std::string& algorithm) const {
  auto made = Registry::instance().make_conv_algorithm(backend_, algorithm, knobs_);
  if (const std::string why = made->unsupported_reason(problem_); !why.empty())
    fail(ErrorKind::unsupported, "layer ", name(), ": algorithm '", algorithm,
         "' does not support ", problem_.key(), ": ", why);
  return made;
}

AlignedBuffer Conv2dLayer::saved_for(const ConvAlgorithm& algorithm) {
  // Only algorithms with something to keep, and told by their knobs to keep it, take memory.
  const size_t bytes = algorithm.saved_bytes(problem_);
  if (bytes == saved_.bytes()) return std::move(saved_);
  return bytes > 0 ? AlignedBuffer(bytes, *memory_) : AlignedBuffer();
}

void Conv2dLayer::use_algorithm(const std::string& algorithm) {
  if (!algorithm_) fail(ErrorKind::usage, "layer ", name(), ": use_algorithm before configure");
  if (algorithm == algorithm_name_) return;
  const auto kept = set_aside_.find(algorithm);
  std::unique_ptr<ConvAlgorithm> next =
      kept != set_aside_.end() ? nullptr : made_for_problem(algorithm);
  AlignedBuffer saved = saved_for(next ? *next : *kept->second);  // may throw: nothing changed
  if (!next) {
    next = std::move(kept->second);
    set_aside_.erase(kept);
  }
  set_aside_[algorithm_name_] = std::move(algorithm_);
  algorithm_ = std::move(next);
  algorithm_name_ = algorithm;
  saved_ = std::move(saved);
}

ConvCall Conv2dLayer::call(const LayerContext& ctx) {
  return ConvCall{problem_,      ctx.exec,      ctx.workspace, ctx.workspace_bytes,
                  saved_.data(), saved_.bytes()};
}

void Conv2dLayer::forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                          Tensor& output, bool) {
  algorithm_->forward(call(ctx), *inputs[0], weight_.value, output);
  if (spec_.bias) ctx.ops.bias_forward(ctx.exec, bias_.value, output);
}

void Conv2dLayer::backward_parameters(const LayerContext& ctx,
                                      const std::vector<const Tensor*>& inputs, const Tensor&,
                                      const Tensor& doutput) {
  if (spec_.bias) ctx.ops.bias_backward(ctx.exec, doutput, bias_.grad);
  algorithm_->backward_filter(call(ctx), *inputs[0], doutput, weight_.grad);
}

void Conv2dLayer::backward_data(const LayerContext& ctx, const std::vector<const Tensor*>&,
                                const Tensor&, const Tensor& doutput,
                                const std::vector<Tensor*>& dinputs) {
  if (dinputs[0]) algorithm_->backward_data(call(ctx), doutput, weight_.value, *dinputs[0]);
}

std::vector<Parameter*> Conv2dLayer::parameters() {
  if (spec_.bias) return {&weight_, &bias_};
  return {&weight_};
}

size_t Conv2dLayer::workspace_bytes() const { return algorithm_->workspace_bytes(problem_); }

}  // namespace tunescope
