// The device kernels behind CudaOps, as host-callable launchers. Each enqueues its work
// on `stream` and returns cudaGetLastError() (launch failures; asynchronous faults show
// when the stream is finished); the caller checks it with TS_CUDA_CHECK. Arguments are
// plain pointers and sizes (C++17, no tunescope types), because the .cu files that
// define them are compiled as C++17; CudaOps does every argument check before calling.
// Semantics and summation orders follow the CPU kernels (kernels/cpu/*Cpu.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define TS_HOST_DEVICE __host__ __device__
#else
#define TS_HOST_DEVICE
#endif

namespace tunescope::cuda {

// A tensor's logical shape and its physical layout.
struct DeviceShape {
  int64_t n = 0, c = 0, h = 0, w = 0;
  bool nhwc = false;
  TS_HOST_DEVICE int64_t count() const { return n * c * h * w; }
  TS_HOST_DEVICE int64_t plane() const { return h * w; }
};

struct DevicePool {
  int64_t kernel_h = 0, kernel_w = 0, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  int64_t out_h = 0, out_w = 0;
};

// --- elementwise (ElementwiseKernels.cu) ---
cudaError_t launch_relu_forward(const float* x, float* y, int64_t count, cudaStream_t stream);
cudaError_t launch_relu_backward(const float* y, const float* dy, float* dx, int64_t count,
                                 cudaStream_t stream);
cudaError_t launch_add(const float* a, const float* b, float* y, int64_t count,
                       cudaStream_t stream);
cudaError_t launch_accumulate(const float* x, float* y, int64_t count, cudaStream_t stream);
// y[n, c, h, w] += bias[c].
cudaError_t launch_bias_forward(const float* bias, float* y, DeviceShape shape,
                                cudaStream_t stream);
// Every row of the rows x columns matrix y = v (the fc bias seeded before the GEMM).
cudaError_t launch_fill_rows(const float* v, float* y, int64_t rows, int64_t columns,
                             cudaStream_t stream);
cudaError_t launch_sgd(float* weight, const float* grad, float* velocity, int64_t count,
                       float learning_rate, float momentum, float weight_decay,
                       cudaStream_t stream);
// y (the other layout) = x, whose layout `x_shape.nhwc` gives.
cudaError_t launch_transpose(const float* x, float* y, DeviceShape x_shape, cudaStream_t stream);

// out = scale * (sources[0] + sources[1] + ...), added in source order; out may be a source.
inline constexpr int kMaxSumSources = 32;
struct SumSources {
  const float* data[kMaxSumSources] = {};
  int count = 0;
};
cudaError_t launch_scaled_sum(SumSources sources, float scale, float* out, int64_t count,
                              cudaStream_t stream);

// --- per-channel (ChannelKernels.cu) ---
// Scratch bytes the channel reductions below need for `shape` and `quantities` sums.
size_t channel_partials_bytes(DeviceShape shape, int quantities);
// out[c] = sum over (n, h, w) of x (the bias gradient).
cudaError_t launch_channel_sums(const float* x, DeviceShape shape, double* partials, float* out,
                                cudaStream_t stream);
// Training batch norm: statistics, running-statistics update, saved mean and 1/std, y.
// `scale` is scratch of C floats.
struct BatchNormTrainArgs {
  const float* x = nullptr;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float* running_mean = nullptr;
  float* running_var = nullptr;
  float* saved_mean = nullptr;
  float* saved_inv_std = nullptr;
  float* y = nullptr;
  float momentum = 0.1f, epsilon = 1e-5f;
  double* partials = nullptr;
  float* scale = nullptr;
};
cudaError_t launch_batchnorm_forward_train(const BatchNormTrainArgs& args, DeviceShape shape,
                                           cudaStream_t stream);
// `scale` is scratch of C floats.
cudaError_t launch_batchnorm_forward_infer(const float* x, const float* gamma, const float* beta,
                                           const float* running_mean, const float* running_var,
                                           float epsilon, float* y, float* scale, DeviceShape shape,
                                           cudaStream_t stream);
// `coefficients` is scratch of 3 * C floats.
struct BatchNormBackwardArgs {
  const float* x = nullptr;
  const float* dy = nullptr;
  const float* gamma = nullptr;
  const float* mean = nullptr;
  const float* inv_std = nullptr;
  float* dx = nullptr;
  float* dgamma = nullptr;
  float* dbeta = nullptr;
  double* partials = nullptr;
  float* coefficients = nullptr;
};
cudaError_t launch_batchnorm_backward(const BatchNormBackwardArgs& args, DeviceShape shape,
                                      cudaStream_t stream);

// --- pooling (PoolingKernels.cu); `in` is the input's shape, the pool gives the output's ---
cudaError_t launch_maxpool_forward(const float* x, float* y, DeviceShape in, DevicePool pool,
                                   cudaStream_t stream);
cudaError_t launch_maxpool_backward(const float* x, const float* dy, float* dx, DeviceShape in,
                                    DevicePool pool, cudaStream_t stream);
cudaError_t launch_avgpool_forward(const float* x, float* y, DeviceShape in, DevicePool pool,
                                   cudaStream_t stream);
cudaError_t launch_avgpool_backward(const float* dy, float* dx, DeviceShape in, DevicePool pool,
                                    cudaStream_t stream);
cudaError_t launch_global_avgpool_forward(const float* x, float* y, DeviceShape in,
                                          cudaStream_t stream);
cudaError_t launch_global_avgpool_backward(const float* dy, float* dx, DeviceShape in,
                                           cudaStream_t stream);

// --- loss (SoftmaxKernels.cu) ---
// Per row of logits (rows x classes): its loss in row_loss, 1 in row_correct when its
// arg-max is the label, and when grad is not null d(loss)/d(logits) scaled by grad_scale.
cudaError_t launch_softmax_cross_entropy(const float* logits, const int32_t* labels, int64_t rows,
                                         int64_t classes, float* grad, float grad_scale,
                                         double* row_loss, int32_t* row_correct,
                                         cudaStream_t stream);

}  // namespace tunescope::cuda
