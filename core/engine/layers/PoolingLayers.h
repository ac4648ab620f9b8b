// Spatial pooling layers: max, average and global average, and the fused conv bias + ReLU +
// max pool.
#pragma once

#include "core/engine/Layer.h"

namespace tunescope {

class MaxPoolLayer : public Layer {
 public:
  MaxPoolLayer(std::string name, PoolParams params) : Layer(std::move(name)), params_(params) {}
  std::string kind() const override { return "maxpool"; }
  Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) override;
  void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                const Tensor& output, const Tensor& doutput,
                const std::vector<Tensor*>& dinputs) override;

 private:
  PoolParams params_;
};

// maxpool(relu(x + bias)) in one pass: a bias-free conv's bias, ReLU and max pooling, which
// the model builder puts after LeNet-5's convs under the fuse knob. It owns the conv's bias
// under the conv's parameter name (`bias_name`), so a fused net has the unfused net's
// parameters, in the same order, and the tuner's numerics check matches them by name.
class BiasReluMaxPoolLayer : public Layer {
 public:
  BiasReluMaxPoolLayer(std::string name, std::string bias_name, PoolParams params)
      : Layer(std::move(name)), bias_name_(std::move(bias_name)), params_(params) {}
  std::string kind() const override { return "bias_relu_maxpool"; }
  Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) override;
  void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                const Tensor& output, const Tensor& doutput,
                const std::vector<Tensor*>& dinputs) override;
  std::vector<Parameter*> parameters() override { return {&bias_}; }

 private:
  std::string bias_name_;
  PoolParams params_;
  Parameter bias_;
};

class AvgPoolLayer : public Layer {
 public:
  AvgPoolLayer(std::string name, PoolParams params) : Layer(std::move(name)), params_(params) {}
  std::string kind() const override { return "avgpool"; }
  Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) override;
  void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                const Tensor& output, const Tensor& doutput,
                const std::vector<Tensor*>& dinputs) override;

 private:
  PoolParams params_;
};

class GlobalAvgPoolLayer : public Layer {
 public:
  using Layer::Layer;
  std::string kind() const override { return "gap"; }
  Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) override;
  void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                const Tensor& output, const Tensor& doutput,
                const std::vector<Tensor*>& dinputs) override;
};

}  // namespace tunescope
