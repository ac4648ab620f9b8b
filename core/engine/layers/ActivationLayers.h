// Parameter-free layers of ONNX models beyond the built-in nets: the pointwise
// activations (leaky ReLU, sigmoid, tanh), a scale by a constant (ONNX Mul) and the
// channel concatenation (ONNX Concat on axis 1).
#pragma once

#include "core/base/OpKernels.h"
#include "core/engine/Layer.h"

namespace tunescope {

class ActivationLayer : public Layer {
 public:
  ActivationLayer(std::string name, ActivationParams params)
      : Layer(std::move(name)), params_(params) {}
  std::string kind() const override { return activation_name(params_.kind); }
  Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) override;
  void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                const Tensor& output, const Tensor& doutput,
                const std::vector<Tensor*>& dinputs) override;

 private:
  ActivationParams params_;
};

// y = factor * x; dx = factor * dy.
class ScaleLayer : public Layer {
 public:
  ScaleLayer(std::string name, float factor) : Layer(std::move(name)), factor_(factor) {}
  std::string kind() const override { return "scale"; }
  std::string describe() const override;
  Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) override;
  void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                const Tensor& output, const Tensor& doutput,
                const std::vector<Tensor*>& dinputs) override;

 private:
  float factor_;
};

// The inputs' channels one after another (same n, h, w); backward splits the gradient.
class ConcatLayer : public Layer {
 public:
  using Layer::Layer;
  std::string kind() const override { return "concat"; }
  Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) override;
  void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                const Tensor& output, const Tensor& doutput,
                const std::vector<Tensor*>& dinputs) override;

 private:
  // Where the gradient of an input nobody needs (the data input) goes: made at its first
  // backward pass, only for such inputs.
  std::vector<Shape4> input_shapes_;
  Layout layout_ = Layout::NCHW;
  MemorySpace* memory_ = nullptr;
  std::vector<Tensor> discarded_;
};

}  // namespace tunescope
