// Batch normalisation on the device: own kernels (ChannelKernels.cu) rather than cuDNN's,
// because the contract's statistics are the CPU's to the letter — sums in double, the
// biased variance in the saved 1/std, the unbiased one in the running estimate — and
// cuDNN's NHWC batch norm needs a different entry point and workspace per mode.
#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaOps.h"
#include "kernels/cuda/CudaOpsSupport.h"

namespace tunescope::cuda {

using namespace op_checks;

namespace {

// The saved statistics live next to x, in its memory.
void ensure_channel_tensor(Tensor& t, const Tensor& like, int64_t channels) {
  const Shape4 shape{1, channels, 1, 1};
  if (t.empty() || !(t.shape() == shape) || t.on_host())
    t = Tensor(shape, like.layout(), like.memory());
}

}  // namespace

void CudaOps::batchnorm_forward_train(const ExecContext& ctx, const BatchNormParams& params,
                                      const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                      Tensor& running_mean, Tensor& running_var,
                                      BatchNormSaved& saved, Tensor& y) {
  constexpr const char* op = "bn.fwd";
  check_batchnorm_forward(op, x, gamma, beta, running_mean, running_var, y);
  check_on_device(op, {{"x", &x},
                       {"gamma", &gamma},
                       {"beta", &beta},
                       {"running_mean", &running_mean},
                       {"running_var", &running_var},
                       {"y", &y}});
  const int64_t channels = x.shape().c;
  ensure_channel_tensor(saved.mean, x, channels);
  ensure_channel_tensor(saved.inv_std, x, channels);
  OpRange range(ctx, op);
  const DeviceShape shape = device_shape(x);
  const size_t partial_bytes = channel_partials_bytes(shape, 2);
  StreamScratch scratch(partial_bytes + static_cast<size_t>(channels) * sizeof(float),
                        stream_of(ctx), op);
  BatchNormTrainArgs args;
  args.x = x.data();
  args.gamma = gamma.data();
  args.beta = beta.data();
  args.running_mean = running_mean.data();
  args.running_var = running_var.data();
  args.saved_mean = saved.mean.data();
  args.saved_inv_std = saved.inv_std.data();
  args.y = y.data();
  args.momentum = params.momentum;
  args.epsilon = params.epsilon;
  args.partials = scratch.as<double>();
  args.scale = scratch.as<float>(partial_bytes);
  TS_CUDA_CHECK(launch_batchnorm_forward_train(args, shape, stream_of(ctx)));
}

void CudaOps::batchnorm_forward_infer(const ExecContext& ctx, const BatchNormParams& params,
                                      const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                      const Tensor& running_mean, const Tensor& running_var,
                                      Tensor& y) {
  constexpr const char* op = "bn.fwd_infer";
  check_batchnorm_forward(op, x, gamma, beta, running_mean, running_var, y);
  check_on_device(op, {{"x", &x},
                       {"gamma", &gamma},
                       {"beta", &beta},
                       {"running_mean", &running_mean},
                       {"running_var", &running_var},
                       {"y", &y}});
  OpRange range(ctx, op);
  StreamScratch scale(static_cast<size_t>(x.shape().c) * sizeof(float), stream_of(ctx), op);
  TS_CUDA_CHECK(launch_batchnorm_forward_infer(
      x.data(), gamma.data(), beta.data(), running_mean.data(), running_var.data(), params.epsilon,
      y.data(), scale.as<float>(), device_shape(x), stream_of(ctx)));
}

void CudaOps::batchnorm_backward(const ExecContext& ctx, const Tensor& x, const Tensor& dy,
                                 const Tensor& gamma, const BatchNormSaved& saved, Tensor& dx,
                                 Tensor& dgamma, Tensor& dbeta) {
  constexpr const char* op = "bn.bwd";
  check_batchnorm_backward(op, x, dy, gamma, saved, dx, dgamma, dbeta);
  check_on_device(op, {{"x", &x},
                       {"dy", &dy},
                       {"gamma", &gamma},
                       {"saved.mean", &saved.mean},
                       {"saved.inv_std", &saved.inv_std},
                       {"dx", &dx},
                       {"dgamma", &dgamma},
                       {"dbeta", &dbeta}});
  OpRange range(ctx, op);
  const DeviceShape shape = device_shape(x);
  const size_t partial_bytes = channel_partials_bytes(shape, 2);
  StreamScratch scratch(partial_bytes + 3 * static_cast<size_t>(shape.c) * sizeof(float),
                        stream_of(ctx), op);
  BatchNormBackwardArgs args;
  args.x = x.data();
  args.dy = dy.data();
  args.gamma = gamma.data();
  args.mean = saved.mean.data();
  args.inv_std = saved.inv_std.data();
  args.dx = dx.data();
  args.dgamma = dgamma.data();
  args.dbeta = dbeta.data();
  args.partials = scratch.as<double>();
  args.coefficients = scratch.as<float>(partial_bytes);
  TS_CUDA_CHECK(launch_batchnorm_backward(args, shape, stream_of(ctx)));
}

}  // namespace tunescope::cuda
