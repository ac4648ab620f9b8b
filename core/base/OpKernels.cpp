// The fused ops' defaults: the unfused ops in sequence, so a backend without fused
// kernels (cuda) runs a fused layer with the same results, traced under the unfused names.
#include "core/base/OpKernels.h"

namespace tunescope {

void OpKernels::batchnorm_relu_forward_train(const ExecContext& ctx, const BatchNormParams& params,
                                             const Tensor& x, const Tensor& gamma,
                                             const Tensor& beta, const Tensor* residual,
                                             Tensor& running_mean, Tensor& running_var,
                                             BatchNormSaved& saved, Tensor& y) {
  batchnorm_forward_train(ctx, params, x, gamma, beta, running_mean, running_var, saved, y);
  if (residual) add(ctx, y, *residual, y);
  relu_forward(ctx, y, y);
}

void OpKernels::batchnorm_relu_backward(const ExecContext& ctx, const Tensor& x, const Tensor& y,
                                        const Tensor& dy, const Tensor& gamma,
                                        const BatchNormSaved& saved, Tensor& dx, Tensor& dgamma,
                                        Tensor& dbeta, Tensor* dresidual) {
  Tensor& g = dresidual ? *dresidual : dx;
  relu_backward(ctx, y, dy, g);
  batchnorm_backward(ctx, x, g, gamma, saved, dx, dgamma, dbeta);
}

void OpKernels::bias_relu_maxpool_forward(const ExecContext& ctx, const PoolParams& params,
                                          const Tensor& x, const Tensor& bias, Tensor& y) {
  maxpool_forward(ctx, params, x, y);
  bias_forward(ctx, bias, y);
  relu_forward(ctx, y, y);
}

void OpKernels::bias_relu_maxpool_backward(const ExecContext& ctx, const PoolParams& params,
                                           const Tensor& x, const Tensor&, const Tensor& y,
                                           const Tensor& dy, Tensor& dx, Tensor& dbias) {
  Tensor passed(dy.shape(), dy.layout(), dy.memory());  // freed after the stream's work
  relu_backward(ctx, y, dy, passed);
  maxpool_backward(ctx, params, x, passed, dx);
  bias_backward(ctx, passed, dbias);
}

}  // namespace tunescope
