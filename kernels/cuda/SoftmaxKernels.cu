// Softmax cross-entropy on the device: one thread per row of logits (the classes of a
// classifier are few), computed as kernels/cpu/SoftmaxCrossEntropyCpu.cpp does: subtract
// the row maximum, sum the exponentials in double, write the gradient in place of the
// exponentials. The per-row losses and hits go back to the host, which adds them in row
// order.
#include <cmath>

#include "kernels/cuda/DeviceLoops.cuh"

namespace tunescope::cuda {

namespace {

__global__ void softmax_cross_entropy_kernel(const float* logits, const int32_t* labels,
                                             int64_t rows, int64_t classes, float* grad,
                                             float grad_scale, double* row_loss,
                                             int32_t* row_correct) {
  for (int64_t r = grid_first(); r < rows; r += grid_step()) {
    const float* z = logits + r * classes;
    float* g = grad ? grad + r * classes : nullptr;
    const int32_t label = labels[r];
    int64_t arg = 0;
    for (int64_t j = 1; j < classes; ++j)
      if (z[j] > z[arg]) arg = j;
    const float max = z[arg];
    const float label_logit = z[label];
    double sum = 0;
    for (int64_t j = 0; j < classes; ++j) {
      const float e = expf(z[j] - max);
      sum += e;
      if (g) g[j] = e;
    }
    if (g) {
      const float scale = static_cast<float>(grad_scale / sum);
      for (int64_t j = 0; j < classes; ++j) g[j] *= scale;
      g[label] -= grad_scale;
    }
    row_loss[r] = log(sum) - (static_cast<double>(label_logit) - max);
    row_correct[r] = arg == label ? 1 : 0;
  }
}

}  // namespace

cudaError_t launch_softmax_cross_entropy(const float* logits, const int32_t* labels, int64_t rows,
                                         int64_t classes, float* grad, float grad_scale,
                                         double* row_loss, int32_t* row_correct,
                                         cudaStream_t stream) {
  return launch_over(rows, stream, softmax_cross_entropy_kernel, logits, labels, rows, classes,
                     grad, grad_scale, row_loss, row_correct);
}

}  // namespace tunescope::cuda
