// ReLU, bias, residual add, gradient accumulation, zero, copy and SGD on the device.
#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaOps.h"
#include "kernels/cuda/CudaOpsSupport.h"

namespace tunescope::cuda {

using namespace op_checks;

void CudaOps::relu_forward(const ExecContext& ctx, const Tensor& x, Tensor& y) {
  check_elementwise_on_device("relu.fwd", {{"x", &x}, {"y", &y}});
  OpRange range(ctx, "relu.fwd");
  TS_CUDA_CHECK(launch_relu_forward(x.data(), y.data(), x.size(), stream_of(ctx)));
}

void CudaOps::relu_backward(const ExecContext& ctx, const Tensor& y, const Tensor& dy, Tensor& dx) {
  check_elementwise_on_device("relu.bwd", {{"y", &y}, {"dy", &dy}, {"dx", &dx}});
  OpRange range(ctx, "relu.bwd");
  TS_CUDA_CHECK(launch_relu_backward(y.data(), dy.data(), dx.data(), y.size(), stream_of(ctx)));
}

void CudaOps::bias_forward(const ExecContext& ctx, const Tensor& bias, Tensor& y) {
  check_per_channel("bias.fwd", "y", y, "bias", bias);
  check_on_device("bias.fwd", {{"bias", &bias}, {"y", &y}});
  OpRange range(ctx, "bias.fwd");
  TS_CUDA_CHECK(launch_bias_forward(bias.data(), y.data(), device_shape(y), stream_of(ctx)));
}

void CudaOps::bias_backward(const ExecContext& ctx, const Tensor& dy, Tensor& dbias) {
  check_per_channel("bias.bwd", "dy", dy, "dbias", dbias);
  check_on_device("bias.bwd", {{"dy", &dy}, {"dbias", &dbias}});
  OpRange range(ctx, "bias.bwd");
  const DeviceShape shape = device_shape(dy);
  StreamScratch partials(channel_partials_bytes(shape, 1), stream_of(ctx), "bias.bwd");
  TS_CUDA_CHECK(
      launch_channel_sums(dy.data(), shape, partials.as<double>(), dbias.data(), stream_of(ctx)));
}

void CudaOps::add(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor& y) {
  check_elementwise_on_device("add", {{"a", &a}, {"b", &b}, {"y", &y}});
  OpRange range(ctx, "add");
  TS_CUDA_CHECK(launch_add(a.data(), b.data(), y.data(), a.size(), stream_of(ctx)));
}

void CudaOps::accumulate(const ExecContext& ctx, const Tensor& x, Tensor& y) {
  check_elementwise_on_device("accumulate", {{"x", &x}, {"y", &y}});
  OpRange range(ctx, "accumulate");
  TS_CUDA_CHECK(launch_accumulate(x.data(), y.data(), x.size(), stream_of(ctx)));
}

void CudaOps::zero(const ExecContext& ctx, Tensor& y) {
  check_present("zero", "y", y);
  check_on_device("zero", {{"y", &y}});
  OpRange range(ctx, "zero");
  TS_CUDA_CHECK(cudaMemsetAsync(y.data(), 0, y.bytes(), stream_of(ctx)));
}

void CudaOps::copy(const ExecContext& ctx, const Tensor& x, Tensor& y) {
  check_elementwise_on_device("copy", {{"x", &x}, {"y", &y}});
  if (x.data() == y.data()) return;
  OpRange range(ctx, "copy");
  TS_CUDA_CHECK(
      cudaMemcpyAsync(y.data(), x.data(), x.bytes(), cudaMemcpyDeviceToDevice, stream_of(ctx)));
}

void CudaOps::sgd_update(const ExecContext& ctx, const SgdParams& params, Tensor& weight,
                         const Tensor& grad, Tensor& velocity) {
  check_elementwise_on_device("sgd",
                              {{"weight", &weight}, {"grad", &grad}, {"velocity", &velocity}});
  OpRange range(ctx, "sgd");
  TS_CUDA_CHECK(launch_sgd(weight.data(), grad.data(), velocity.data(), weight.size(),
                           params.learning_rate, params.momentum, params.weight_decay,
                           stream_of(ctx)));
}

}  // namespace tunescope::cuda
