// One node of the training graph: an op with its parameters. Layers call kernels only
// through the backend's OpKernels and through ConvAlgorithms found by name.
#pragma once

#include <string>
#include <vector>

#include "core/base/Backend.h"
#include "core/base/ExecContext.h"
#include "core/base/Knob.h"
#include "core/base/Tensor.h"

namespace tunescope {

// A trainable tensor with its gradient and SGD momentum buffer.
struct Parameter {
  std::string name;  // "<layer>.weight", "<layer>.bias", ...
  Tensor value;
  Tensor grad;
  Tensor velocity;
};

// What a layer may use while it runs: the backend's ops, where to run and trace, and
// the conv workspace shared by the layers of one lane.
struct LayerContext {
  OpKernels& ops;
  ExecContext exec;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

// What a layer needs to know when it is configured.
struct LayerSetup {
  Layout layout = Layout::NCHW;
  std::string backend = "cpu";
  uint64_t seed = 1;                     // parameter initialisation
  MemorySpace* memory = &host_memory();  // the backend's: where parameters and activations live
  KnobValues
      knobs{};  // the run's knobs, handed to every conv algorithm the layers make (fft_tile, ...)
};

class Layer {
 public:
  explicit Layer(std::string name) : name_(std::move(name)) {}
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  const std::string& name() const { return name_; }
  virtual std::string kind() const = 0;
  // Human-readable detail for model summaries, e.g. "3x3/2 16->32 gemm".
  virtual std::string describe() const { return kind(); }

  // Called once when the graph is built: checks the input shapes (throwing
  // Error(usage) naming the layer), creates parameters, returns the output shape.
  virtual Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) = 0;

  virtual void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                       Tensor& output, bool training) = 0;
  // Writes d(loss)/d(inputs[i]) into dinputs[i] (overwriting); a null entry is not
  // needed (the data input) and is skipped. Parameter gradients are overwritten too.
  virtual void backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                        const Tensor& output, const Tensor& doutput,
                        const std::vector<Tensor*>& dinputs) = 0;

  // True for layers whose parameter gradients do not depend on the input gradients
  // (conv, fc): an executor may then run backward_parameters() and backward_data() on
  // different lanes. Such layers derive from SeparableLayer.
  virtual bool separable_backward() const { return false; }

  virtual std::vector<Parameter*> parameters() { return {}; }
  virtual size_t workspace_bytes() const { return 0; }
  // Memory the layer keeps from its forward to its backward pass beyond its output (the
  // FFT spectra an FFT algorithm keeps under fft_workspace=cache).
  virtual size_t saved_bytes() const { return 0; }
  // Multiply-adds x 2 of one forward pass (for reports).
  virtual double forward_flops() const { return 0; }

 private:
  std::string name_;
};

// A layer whose backward pass is two independent parts: the input gradients (written
// to dinputs as in backward()) and the parameter gradients (overwritten). Both only
// read the forward state, so they may run concurrently on different lanes.
class SeparableLayer : public Layer {
 public:
  using Layer::Layer;

  bool separable_backward() const final { return true; }
  void backward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                const Tensor& output, const Tensor& doutput,
                const std::vector<Tensor*>& dinputs) final {
    backward_parameters(ctx, inputs, output, doutput);
    backward_data(ctx, inputs, output, doutput, dinputs);
  }
  virtual void backward_data(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                             const Tensor& output, const Tensor& doutput,
                             const std::vector<Tensor*>& dinputs) = 0;
  virtual void backward_parameters(const LayerContext& ctx,
                                   const std::vector<const Tensor*>& inputs, const Tensor& output,
                                   const Tensor& doutput) = 0;
};

}  // namespace tunescope
