// Elementwise device kernels: ReLU, add, accumulate, bias, the fc bias seed, SGD, the
// layout transpose and the scaled sum of the all-reduce. Flat loops serve both layouts
// except bias (channel per offset) and transpose (logical index per offset).
#include "kernels/cuda/DeviceLoops.cuh"

namespace tunescope::cuda {

namespace {

__global__ void relu_forward_kernel(const float* x, float* y, int64_t count) {
  // !(x <= 0) keeps NaN, as the CPU kernel does, so divergence shows as a NaN loss.
  for (int64_t i = grid_first(); i < count; i += grid_step()) y[i] = !(x[i] <= 0.0f) ? x[i] : 0.0f;
}

__global__ void relu_backward_kernel(const float* y, const float* dy, float* dx, int64_t count) {
  for (int64_t i = grid_first(); i < count; i += grid_step()) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

__global__ void add_kernel(const float* a, const float* b, float* y, int64_t count) {
  for (int64_t i = grid_first(); i < count; i += grid_step()) y[i] = a[i] + b[i];
}

__global__ void accumulate_kernel(const float* x, float* y, int64_t count) {
  for (int64_t i = grid_first(); i < count; i += grid_step()) y[i] += x[i];
}

__global__ void bias_forward_kernel(const float* bias, float* y, DeviceShape s) {
  for (int64_t i = grid_first(); i < s.count(); i += grid_step()) y[i] += bias[channel_of(i, s)];
}

__global__ void fill_rows_kernel(const float* v, float* y, int64_t rows, int64_t columns) {
  for (int64_t i = grid_first(); i < rows * columns; i += grid_step()) y[i] = v[i % columns];
}

__global__ void sgd_kernel(float* w, const float* g, float* v, int64_t count, float lr,
                           float momentum, float decay) {
  for (int64_t i = grid_first(); i < count; i += grid_step()) {
    v[i] = momentum * v[i] + (g[i] + decay * w[i]);
    w[i] -= lr * v[i];
  }
}

// One thread per element of y: it reads the same logical element of x.
__global__ void transpose_kernel(const float* x, float* y, DeviceShape s) {
  for (int64_t i = grid_first(); i < s.count(); i += grid_step()) {
    int64_t n, c, h, w;
    if (s.nhwc) {  // y is NCHW
      w = i % s.w;
      h = (i / s.w) % s.h;
      c = (i / s.plane()) % s.c;
      n = i / (s.plane() * s.c);
      y[i] = x[((n * s.h + h) * s.w + w) * s.c + c];
    } else {  // y is NHWC
      c = i % s.c;
      w = (i / s.c) % s.w;
      h = (i / (s.c * s.w)) % s.h;
      n = i / (s.c * s.plane());
      y[i] = x[((n * s.c + c) * s.h + h) * s.w + w];
    }
  }
}

__global__ void scaled_sum_kernel(SumSources sources, float scale, float* out, int64_t count) {
  for (int64_t i = grid_first(); i < count; i += grid_step()) {
    float sum = 0;
    for (int k = 0; k < sources.count; ++k) sum += sources.data[k][i];
    out[i] = scale * sum;
  }
}

}  // namespace

cudaError_t launch_relu_forward(const float* x, float* y, int64_t count, cudaStream_t stream) {
  return launch_over(count, stream, relu_forward_kernel, x, y, count);
}

cudaError_t launch_relu_backward(const float* y, const float* dy, float* dx, int64_t count,
                                 cudaStream_t stream) {
  return launch_over(count, stream, relu_backward_kernel, y, dy, dx, count);
}

cudaError_t launch_add(const float* a, const float* b, float* y, int64_t count,
                       cudaStream_t stream) {
  return launch_over(count, stream, add_kernel, a, b, y, count);
}

cudaError_t launch_accumulate(const float* x, float* y, int64_t count, cudaStream_t stream) {
  return launch_over(count, stream, accumulate_kernel, x, y, count);
}

cudaError_t launch_bias_forward(const float* bias, float* y, DeviceShape shape,
                                cudaStream_t stream) {
  return launch_over(shape.count(), stream, bias_forward_kernel, bias, y, shape);
}

cudaError_t launch_fill_rows(const float* v, float* y, int64_t rows, int64_t columns,
                             cudaStream_t stream) {
  return launch_over(rows * columns, stream, fill_rows_kernel, v, y, rows, columns);
}

cudaError_t launch_sgd(float* weight, const float* grad, float* velocity, int64_t count,
                       float learning_rate, float momentum, float weight_decay,
                       cudaStream_t stream) {
  return launch_over(count, stream, sgd_kernel, weight, grad, velocity, count, learning_rate,
                     momentum, weight_decay);
}

cudaError_t launch_transpose(const float* x, float* y, DeviceShape x_shape, cudaStream_t stream) {
  return launch_over(x_shape.count(), stream, transpose_kernel, x, y, x_shape);
}

cudaError_t launch_scaled_sum(SumSources sources, float scale, float* out, int64_t count,
                              cudaStream_t stream) {
  return launch_over(count, stream, scaled_sum_kernel, sources, scale, out, count);
}

}  // namespace tunescope::cuda
