// Fully connected layer over the flattened (c, h, w) of its input.
#pragma once

#include "core/engine/Layer.h"

namespace tunescope {

class LinearLayer : public SeparableLayer {
 public:
  // Without bias (an ONNX MatMul) the bias stays zero and is no parameter.
  LinearLayer(std::string name, int64_t out_features, bool bias = true)
      : SeparableLayer(std::move(name)), out_features_(out_features), has_bias_(bias) {}
  std::string kind() const override { return "fc"; }
  std::string describe() const override;
  Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) override;
  void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward_data(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                     const Tensor& output, const Tensor& doutput,
                     const std::vector<Tensor*>& dinputs) override;
  void backward_parameters(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                           const Tensor& output, const Tensor& doutput) override;
  std::vector<Parameter*> parameters() override {
    if (has_bias_) return {&weight_, &bias_};
    return {&weight_};
  }
  double forward_flops() const override;

 private:
  int64_t out_features_;
  bool has_bias_;
  Shape4 input_{0, 0, 0, 0};
  Parameter weight_;
  Parameter bias_;
};

}  // namespace tunescope
