// The CPU implementation of the non-convolution op kernels: native NCHW and NHWC loops
// on the lane's ThreadPool, sgemm from (single-threaded) OpenBLAS for the FC layer.
// Reductions use partitions fixed by the tensor shape, so results are bit-identical for
// any pool size. Each method lives in the .cpp of its op family (BatchNormCpu.cpp, ...).
#pragma once

#include "core/base/OpKernels.h"

namespace tunescope::cpu {

class CpuOps final : public OpKernels {
 public:
  void batchnorm_forward_train(const ExecContext& ctx, const BatchNormParams& params,
                               const Tensor& x, const Tensor& gamma, const Tensor& beta,
                               Tensor& running_mean, Tensor& running_var, BatchNormSaved& saved,
                               Tensor& y) override;
  void batchnorm_forward_infer(const ExecContext& ctx, const BatchNormParams& params,
                               const Tensor& x, const Tensor& gamma, const Tensor& beta,
                               const Tensor& running_mean, const Tensor& running_var,
                               Tensor& y) override;
  void batchnorm_backward(const ExecContext& ctx, const Tensor& x, const Tensor& dy,
                          const Tensor& gamma, const BatchNormSaved& saved, Tensor& dx,
                          Tensor& dgamma, Tensor& dbeta) override;

  void batchnorm_relu_forward_train(const ExecContext& ctx, const BatchNormParams& params,
                                    const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    const Tensor* residual, Tensor& running_mean,
                                    Tensor& running_var, BatchNormSaved& saved, Tensor& y) override;
  void batchnorm_relu_backward(const ExecContext& ctx, const Tensor& x, const Tensor& y,
                               const Tensor& dy, const Tensor& gamma, const BatchNormSaved& saved,
                               Tensor& dx, Tensor& dgamma, Tensor& dbeta,
                               Tensor* dresidual) override;

  void relu_forward(const ExecContext& ctx, const Tensor& x, Tensor& y) override;
  void relu_backward(const ExecContext& ctx, const Tensor& y, const Tensor& dy,
                     Tensor& dx) override;

  void bias_relu_maxpool_forward(const ExecContext& ctx, const PoolParams& params, const Tensor& x,
                                 const Tensor& bias, Tensor& y) override;
  void bias_relu_maxpool_backward(const ExecContext& ctx, const PoolParams& params, const Tensor& x,
                                  const Tensor& bias, const Tensor& y, const Tensor& dy, Tensor& dx,
                                  Tensor& dbias) override;
  void maxpool_forward(const ExecContext& ctx, const PoolParams& params, const Tensor& x,
                       Tensor& y) override;
  void maxpool_backward(const ExecContext& ctx, const PoolParams& params, const Tensor& x,
                        const Tensor& dy, Tensor& dx) override;
  void avgpool_forward(const ExecContext& ctx, const PoolParams& params, const Tensor& x,
                       Tensor& y) override;
  void avgpool_backward(const ExecContext& ctx, const PoolParams& params, const Tensor& dy,
                        Tensor& dx) override;
  void global_avgpool_forward(const ExecContext& ctx, const Tensor& x, Tensor& y) override;
  void global_avgpool_backward(const ExecContext& ctx, const Tensor& dy, Tensor& dx) override;

  void fc_forward(const ExecContext& ctx, const Tensor& x, const Tensor& weight, const Tensor& bias,
                  Tensor& y) override;
  void fc_backward_data(const ExecContext& ctx, const Tensor& dy, const Tensor& weight,
                        Tensor& dx) override;
  void fc_backward_weight(const ExecContext& ctx, const Tensor& x, const Tensor& dy,
                          Tensor& dweight, Tensor& dbias) override;

  void bias_forward(const ExecContext& ctx, const Tensor& bias, Tensor& y) override;
  void bias_backward(const ExecContext& ctx, const Tensor& dy, Tensor& dbias) override;
  void add(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor& y) override;
  void accumulate(const ExecContext& ctx, const Tensor& x, Tensor& y) override;
  void zero(const ExecContext& ctx, Tensor& y) override;
  void copy(const ExecContext& ctx, const Tensor& x, Tensor& y) override;

  float softmax_cross_entropy(const ExecContext& ctx, const Tensor& logits,
                              std::span<const int32_t> labels, Tensor* dlogits,
                              int64_t* correct) override;

  void sgd_update(const ExecContext& ctx, const SgdParams& params, Tensor& weight,
                  const Tensor& grad, Tensor& velocity) override;

  void transpose(const ExecContext& ctx, const Tensor& x, Tensor& y) override;

  void scatter_rows(const ExecContext& ctx, const Tensor& batch, int64_t first,
                    Tensor& shard) override;
  void allreduce_sum(const ExecContext& ctx, std::span<const Tensor* const> sources, float scale,
                     Tensor& out) override;
  void broadcast(const ExecContext& ctx, const Tensor& source,
                 std::span<Tensor* const> targets) override;
  void copy_to_host(const ExecContext& ctx, const Tensor& src, Tensor& host_dst) override;
  void copy_from_host(const ExecContext& ctx, const Tensor& host_src, Tensor& dst) override;
};

}  // namespace tunescope::cpu
