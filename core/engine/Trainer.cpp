#include "core/engine/Trainer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/base/Error.h"

namespace tunescope {

namespace {
using profiler::RangeCategory;
using profiler::RangeScope;
}  // namespace

StepStats& StepStats::operator+=(const StepStats& other) {
  loss_sum += other.loss_sum;
  correct += other.correct;
  examples += other.examples;
  return *this;
}

Trainer::Trainer(Network& net, OpKernels& ops, ThreadPool& pool, profiler::Tracer* tracer, SgdParams sgd)
    : net_(net),
      ops_(ops),
      pool_(pool),
      tracer_(tracer),
      sgd_(sgd),
      workspace_(net.workspace_bytes()),
      dlogits_(net.output_shape(), net.layout()),
      eval_input_(net.input_shape(), net.layout()) {}

LayerContext Trainer::context() {
  return LayerContext{ops_, ExecContext{pool_, tracer_, 0, 0}, workspace_.data(), workspace_.bytes()};
}

StepStats Trainer::train_step(const Tensor& images, std::span<const int32_t> labels) {
  RangeScope iteration(tracer_, "train_step", RangeCategory::iteration);
  const LayerContext ctx = context();
  const Tensor& logits = net_.forward(ctx, images, true);
  int64_t correct = 0;
  const float loss = ops_.softmax_cross_entropy(ctx.exec, logits, labels, &dlogits_, &correct);
  if (!std::isfinite(loss))
    fail(ErrorKind::runtime, "model ", net_.model_name(), ": loss is ", loss, " at step ", step_,
         " (training diverged)");
  net_.backward(ctx, images, dlogits_);
  {
    RangeScope update(tracer_, "update", RangeCategory::phase);
    for (Parameter* p : net_.parameters()) ops_.sgd_update(ctx.exec, sgd_, p->value, p->grad, p->velocity);
  }
  ++step_;
  const auto n = static_cast<int64_t>(labels.size());
  return StepStats{static_cast<double>(loss) * static_cast<double>(n), correct, n};
}

StepStats Trainer::eval_step(const Tensor& images, std::span<const int32_t> labels) {
  RangeScope iteration(tracer_, "eval_step", RangeCategory::iteration);
  const Shape4 full = net_.input_shape();
  const Tensor* input = &images;
  if (!(images.shape() == full)) {
    if (images.shape().n > full.n || images.shape().item_count() != full.item_count() ||
        images.layout() != net_.layout())
      fail(ErrorKind::runtime, "model ", net_.model_name(), ": eval batch ", images.shape().str(),
           " does not fit the model's input ", full.str());
    // The batch is the outermost dimension in both layouts: rows copy as one block.
    eval_input_.zero();
    std::memcpy(eval_input_.data(), images.data(), images.bytes());
    input = &eval_input_;
  }
  const Tensor& logits = net_.forward(context(), *input, false);
  return score_logits(logits, labels);
}

StepStats score_logits(const Tensor& logits, std::span<const int32_t> labels) {
  const int64_t classes = logits.shape().c;
  const auto rows = static_cast<int64_t>(labels.size());
  if (rows > logits.shape().n)
    fail(ErrorKind::runtime, "score_logits: ", rows, " labels for ", logits.shape().n, " rows");
  StepStats stats;
  for (int64_t n = 0; n < rows; ++n) {
    const int32_t label = labels[n];
    if (label < 0 || label >= classes)
      fail(ErrorKind::input, "label ", label, " at row ", n, " is outside 0..", classes - 1);
    int64_t best = 0;
    float top = logits.at(n, 0, 0, 0);
    for (int64_t k = 1; k < classes; ++k)
      if (logits.at(n, k, 0, 0) > top) top = logits.at(n, k, 0, 0), best = k;
    double sum = 0;
    for (int64_t k = 0; k < classes; ++k) sum += std::exp(static_cast<double>(logits.at(n, k, 0, 0) - top));
    stats.loss_sum += std::log(sum) - static_cast<double>(logits.at(n, label, 0, 0) - top);
    stats.correct += best == label;
  }
  stats.examples = rows;
  return stats;
}

}  // namespace tunescope
