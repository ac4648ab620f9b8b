// Batch normalisation: batch statistics while training, running statistics in eval; and
// the same fused with the ReLU after it (and the residual join between them).
#pragma once

#include "core/engine/Layer.h"

namespace tunescope {

class BatchNormLayer : public Layer {
 public:
  explicit BatchNormLayer(std::string name, BatchNormParams params = {})
      : Layer(name), parameter_prefix_(std::move(name)), params_(params) {}

  std::string kind() const override { return "bn"; }
  Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) override;
  void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                const Tensor& output, const Tensor& doutput,
                const std::vector<Tensor*>& dinputs) override;
  std::vector<Parameter*> parameters() override { return {&gamma_, &beta_}; }
  // The statistics inference uses (a model file may bring them).
  Tensor& running_mean() { return running_mean_; }
  Tensor& running_var() { return running_var_; }

 protected:
  // `parameter_prefix` names gamma and beta ("<prefix>.gamma").
  BatchNormLayer(std::string name, std::string parameter_prefix, BatchNormParams params)
      : Layer(std::move(name)), parameter_prefix_(std::move(parameter_prefix)), params_(params) {}
  // Creates the parameters and statistics for the channels of `input`.
  void configure_parameters(const Shape4& input, const LayerSetup& setup);

  std::string parameter_prefix_;
  BatchNormParams params_;
  Parameter gamma_;
  Parameter beta_;
  Tensor running_mean_;
  Tensor running_var_;
  BatchNormSaved saved_;
};

// y = relu(bn(x)), or with a second input (the residual shortcut) y = relu(bn(x) + shortcut):
// one kernel each way instead of two or three (OpKernels::batchnorm_relu_*). Its
// parameters keep the batch norm's names, so fused and unfused runs of one model have the
// same parameters (the tuner's numerics check compares them by name).
class BatchNormReluLayer : public BatchNormLayer {
 public:
  BatchNormReluLayer(std::string name, std::string batch_norm_name, bool residual,
                     BatchNormParams params = {})
      : BatchNormLayer(std::move(name), std::move(batch_norm_name), params), residual_(residual) {}

  std::string kind() const override { return residual_ ? "bn_add_relu" : "bn_relu"; }
  Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) override;
  void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                const Tensor& output, const Tensor& doutput,
                const std::vector<Tensor*>& dinputs) override;

 private:
  bool residual_;
};

}  // namespace tunescope
