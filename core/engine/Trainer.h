// Runs training and evaluation steps of a Network on one lane: forward, loss, backward,
// SGD update, each traced as ranges (iteration, phase, layer) around the kernels.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/AlignedBuffer.h"
#include "core/base/Backend.h"
#include "core/base/ThreadPool.h"
#include "core/engine/Network.h"
#include "profiler/Tracer.h"

namespace tunescope {

struct StepStats {
  double loss_sum = 0;    // sum over examples of the cross-entropy
  int64_t correct = 0;
  int64_t examples = 0;

  double mean_loss() const { return examples ? loss_sum / static_cast<double>(examples) : 0.0; }
  double accuracy() const { return examples ? static_cast<double>(correct) / static_cast<double>(examples) : 0.0; }
  StepStats& operator+=(const StepStats& other);
};

class Trainer {
 public:
  Trainer(Network& net, OpKernels& ops, ThreadPool& pool, profiler::Tracer* tracer, SgdParams sgd);

  // One SGD step on a full batch. Throws Error(runtime) naming the step when the loss
  // is not finite (a diverging configuration).
  StepStats train_step(const Tensor& images, std::span<const int32_t> labels);
  // Inference on up to a full batch: a smaller final batch is padded with zero images
  // and only its real rows are scored.
  StepStats eval_step(const Tensor& images, std::span<const int32_t> labels);

  int64_t steps_done() const { return step_; }
  Network& network() { return net_; }

 private:
  LayerContext context();

  Network& net_;
  OpKernels& ops_;
  ThreadPool& pool_;
  profiler::Tracer* tracer_;
  SgdParams sgd_;
  AlignedBuffer workspace_;
  Tensor dlogits_;
  Tensor eval_input_;
  int64_t step_ = 0;
};

// Cross-entropy and arg-max accuracy of the first labels.size() rows of logits
// {N, K, 1, 1}, on the host: for evaluation, where a final batch may be partial.
StepStats score_logits(const Tensor& logits, std::span<const int32_t> labels);

}  // namespace tunescope
