// Batch normalisation: batch statistics while training, running statistics in eval.
#pragma once

#include "core/engine/Layer.h"

namespace tunescope {

class BatchNormLayer : public Layer {
 public:
  explicit BatchNormLayer(std::string name, BatchNormParams params = {})
      : Layer(std::move(name)), params_(params) {}

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

 private:
  BatchNormParams params_;
  Parameter gamma_;
  Parameter beta_;
  Tensor running_mean_;
  Tensor running_var_;
  BatchNormSaved saved_;
};

}  // namespace tunescope
