// Softmax cross-entropy loss and its gradient on the CPU. Logits {N, K, 1, 1} are stored
// alike in both layouts (one row of K classes per item), so one row loop serves both.
#include <cmath>
#include <vector>

#include "core/base/Error.h"
#include "kernels/cpu/CpuOps.h"
#include "kernels/cpu/CpuOpsSupport.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {

using namespace ops;

namespace {

struct RowResult {
  double loss = 0;
  int64_t correct = 0;
};

// Loss of one row, and when `grad` is not null its gradient scaled by `grad_scale`.
// Subtracting the row maximum keeps exp() finite for any logits. Reads every logit
// before writing the same position of grad, so grad may alias z.
RowResult softmax_row(const float* z, int64_t classes, int32_t label, float* grad,
                      float grad_scale) {
  int64_t arg = 0;
  for (int64_t j = 1; j < classes; ++j)
    if (z[j] > z[arg]) arg = j;
  const float max = z[arg];
  const float label_logit = z[label];
  double sum = 0;
  for (int64_t j = 0; j < classes; ++j) {
    const float e = std::exp(z[j] - max);
    sum += e;
    if (grad) grad[j] = e;
  }
  if (grad) {
    const float scale = static_cast<float>(grad_scale / sum);
    for (int64_t j = 0; j < classes; ++j) grad[j] *= scale;
    grad[label] -= grad_scale;
  }
  return {std::log(sum) - (static_cast<double>(label_logit) - max), arg == label ? 1 : 0};
}

}  // namespace

float CpuOps::softmax_cross_entropy(const ExecContext& ctx, const Tensor& logits,
                                    std::span<const int32_t> labels, Tensor* dlogits,
                                    int64_t* correct) {
  check_softmax_cross_entropy(logits, labels, dlogits);
  const Shape4 s = logits.shape();
  const int64_t batch = s.n, classes = s.c;
  profiler::KernelScope scope(ctx.tracer, "softmax_xent", ctx.device, ctx.lane, 6.0 * logits.size(),
                              static_cast<double>(logits.bytes() * (dlogits ? 2 : 1)));

  const float* z = logits.data();
  float* grad = dlogits ? dlogits->data() : nullptr;
  const float grad_scale = 1.0f / static_cast<float>(batch);
  // Per-chunk partial losses added in chunk order: the mean is independent of the pool.
  const Chunks rows = fixed_chunks(batch, ceil_div(kReductionChunk, classes));
  std::vector<RowResult> partial(rows.number);
  ctx.pool.parallel_for(
      rows.number,
      [&](int64_t first, int64_t last) {
        for (int64_t chunk = first; chunk < last; ++chunk)
          for (int64_t r = rows.begin(chunk); r < rows.end(chunk); ++r) {
            const RowResult row = softmax_row(z + r * classes, classes, labels[r],
                                              grad ? grad + r * classes : nullptr, grad_scale);
            partial[chunk].loss += row.loss;
            partial[chunk].correct += row.correct;
          }
      },
      grain_for(rows.size * classes));

  RowResult total;
  for (const RowResult& p : partial) {
    total.loss += p.loss;
    total.correct += p.correct;
  }
  if (correct) *correct = total.correct;
  return static_cast<float>(total.loss / static_cast<double>(batch));
}

}  // namespace tunescope::cpu
