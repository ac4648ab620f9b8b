// Layers without parameters that map inputs to an output of the same shape: ReLU and
// the residual add.
#pragma once

#include "core/engine/Layer.h"

namespace tunescope {

class ReluLayer : public Layer {
 public:
  using Layer::Layer;
  std::string kind() const override { return "relu"; }
  Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) override;
  void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                const Tensor& output, const Tensor& doutput,
                const std::vector<Tensor*>& dinputs) override;
};

// Residual join: output = a + b; both inputs receive the output gradient.
class AddLayer : public Layer {
 public:
  using Layer::Layer;
  std::string kind() const override { return "add"; }
  Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) override;
  void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                const Tensor& output, const Tensor& doutput,
                const std::vector<Tensor*>& dinputs) override;
};

}  // namespace tunescope
