// Spatial pooling layers: max, average and global average.
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
