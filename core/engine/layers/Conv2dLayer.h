// 2-D convolution (+ optional per-channel bias) running the ConvAlgorithm named in the
// run config, found through the Registry.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/base/AlignedBuffer.h"
#include "core/base/ConvAlgorithm.h"
#include "core/engine/Layer.h"

namespace tunescope {

struct Conv2dSpec {
  int64_t out_channels = 1;
  int64_t kernel = 3;
  int64_t stride = 1;
  int64_t pad = 0;
  bool bias = false;
  int64_t groups = 1;  // > 1: grouped (input channels = groups: depthwise); ConvProblem::groups
};

class Conv2dLayer : public SeparableLayer {
 public:
  Conv2dLayer(std::string name, Conv2dSpec spec, std::string algorithm);

  std::string kind() const override { return "conv"; }
  std::string describe() const override;
  Shape4 configure(const std::vector<Shape4>& inputs, const LayerSetup& setup) override;
  void forward(const LayerContext& ctx, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward_data(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                     const Tensor& output, const Tensor& doutput,
                     const std::vector<Tensor*>& dinputs) override;
  void backward_parameters(const LayerContext& ctx, const std::vector<const Tensor*>& inputs,
                           const Tensor& output, const Tensor& doutput) override;
  std::vector<Parameter*> parameters() override;
  size_t workspace_bytes() const override;
  size_t saved_bytes() const override { return saved_.bytes(); }
  double forward_flops() const override { return problem_.flops(); }

  const ConvProblem& problem() const { return problem_; }
  const std::string& algorithm_name() const { return algorithm_name_; }
  // Runs `algorithm` from now on (after configure), keeping the weights: what lets one
  // session time configs that differ only in their conv algorithms (a tune's rounds,
  // MeasureOptions::share_sessions). An algorithm run before is kept and taken back, so
  // its state (plans, primitives) is built once. Throws Error(unsupported) naming the
  // layer when `algorithm` cannot run its problem; the layer then runs what it ran.
  void use_algorithm(const std::string& algorithm);
  // Whether the knob `key` changes how this layer's algorithm runs its problem.
  bool knob_applies(std::string_view key) const {
    return algorithm_ && algorithm_->knob_applies(key, problem_);
  }

 private:
  ConvCall call(const LayerContext& ctx);
  std::unique_ptr<ConvAlgorithm> made_for_problem(const std::string& algorithm) const;
  // saved_ as `algorithm` keeps it: saved_ itself when the size is the same.
  AlignedBuffer saved_for(const ConvAlgorithm& algorithm);

  Conv2dSpec spec_;
  std::string algorithm_name_;
  ConvProblem problem_;
  std::unique_ptr<ConvAlgorithm> algorithm_;
  std::map<std::string, std::unique_ptr<ConvAlgorithm>> set_aside_;  // run before, by name
  std::string backend_;            // the setup's, for use_algorithm
  KnobValues knobs_;               // the setup's, for use_algorithm
  MemorySpace* memory_ = nullptr;  // the setup's: where saved_ lives
  AlignedBuffer saved_;            // ConvCall::saved under fft_workspace=cache; empty otherwise
  Parameter weight_;
  Parameter bias_;
};

}  // namespace tunescope
