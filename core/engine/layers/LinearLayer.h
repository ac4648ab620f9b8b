// Fully connected layer over the flattened (c, h, w) of its input.
#pragma once

#include "core/engine/Layer.h"

namespace tunescope {

class LinearLayer : public SeparableLayer {
 public:
  LinearLayer(std::string name, int64_t out_features)
      : SeparableLayer(std::move(name)), out_features_(out_features) {}
  std::string kind() const override { return "fc"; }
  std::string describe() const override;
  Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) override;
  void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward_data(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, const Tensor& output,
                     const Tensor& doutput, const std::vector<Tensor*>& dinputs) override;
  void backward_parameters(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                           const Tensor& output, const Tensor& doutput) override;
  std::vector<Parameter*> parameters() override { return {&weight_, &bias_}; }
  double forward_flops() const override;

 private:
  int64_t out_features_;
  Shape4 input_{0, 0, 0, 0};
  Parameter weight_;
  Parameter bias_;
};

}  // namespace tunescope
