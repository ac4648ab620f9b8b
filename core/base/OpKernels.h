// The non-convolution kernels of a backend. Every method works natively on NCHW and
// NHWC tensors (all tensor arguments of one call share a layout unless stated), records
// itself on ctx.tracer as a kernel named as below (a device backend, whose kernels the
// device tracer records, records a phase range of that name around its launches), and
// overwrites its outputs unless its name says "accumulate". Per-channel parameters are
// tensors of shape {1, C, 1, 1}.
#pragma once

#include <cstdint>
#include <span>

#include "core/base/ExecContext.h"
#include "core/base/Tensor.h"

namespace tunescope {

struct PoolParams {
  int64_t kernel_h = 2, kernel_w = 2;
  int64_t stride_h = 2, stride_w = 2;
  int64_t pad_h = 0, pad_w = 0;

  Shape4 output(const Shape4& input) const;
};

struct BatchNormParams {
  float momentum = 0.1f;  // running = (1 - momentum) * running + momentum * batch
  float epsilon = 1e-5f;
};

// Statistics of one training forward pass, kept for the backward pass.
struct BatchNormSaved {
  Tensor mean;     // {1, C, 1, 1}
  Tensor inv_std;  // {1, C, 1, 1}: 1 / sqrt(biased batch variance + epsilon)
};

// The pointwise activations besides ReLU (ONNX LeakyRelu, Sigmoid, Tanh).
enum class Activation { leaky_relu, sigmoid, tanh };
struct ActivationParams {
  Activation kind = Activation::sigmoid;
  float alpha = 0.01f;  // leaky_relu: y = alpha * x for x < 0
};
// "leaky_relu", "sigmoid", "tanh": the kernels are "<name>.fwd" and "<name>.bwd".
const char* activation_name(Activation kind);

struct SgdParams {
  float learning_rate = 0.01f;
  float momentum = 0.9f;
  float weight_decay = 0.0f;
};

class OpKernels {
 public:
  virtual ~OpKernels() = default;

  // "bn.fwd": batch statistics over (n, h, w) per channel; updates running mean and
  // running (unbiased) variance; fills `saved`.
  virtual void batchnorm_forward_train(const ExecContext& ctx, const BatchNormParams& params,
                                       const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                       Tensor& running_mean, Tensor& running_var,
                                       BatchNormSaved& saved, Tensor& y) = 0;
  // "bn.fwd_infer": uses the running statistics.
  virtual void batchnorm_forward_infer(const ExecContext& ctx, const BatchNormParams& params,
                                       const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                       const Tensor& running_mean, const Tensor& running_var,
                                       Tensor& y) = 0;
  // "bn.bwd": dx, dgamma, dbeta of the training forward pass (dx may alias dy).
  virtual void batchnorm_backward(const ExecContext& ctx, const Tensor& x, const Tensor& dy,
                                  const Tensor& gamma, const BatchNormSaved& saved, Tensor& dx,
                                  Tensor& dgamma, Tensor& dbeta) = 0;

  // Batch norm and ReLU in one pass, with the residual join between them when `residual`
  // is not null: y = relu(bn(x) + residual), statistics and `saved` as bn.fwd.
  // "bn_relu.fwd" / "bn_add_relu.fwd". y must not alias x (the backward pass reads both).
  // The default runs bn.fwd, add and relu.fwd, for a backend without the fused kernel.
  virtual void batchnorm_relu_forward_train(const ExecContext& ctx, const BatchNormParams& params,
                                            const Tensor& x, const Tensor& gamma,
                                            const Tensor& beta, const Tensor* residual,
                                            Tensor& running_mean, Tensor& running_var,
                                            BatchNormSaved& saved, Tensor& y);
  // Its gradient, from x, the fused output y and dy: g = (y > 0 ? dy : 0) goes to
  // `dresidual` when not null, and dx, dgamma, dbeta are bn.bwd's of g.
  // "bn_relu.bwd" / "bn_add_relu.bwd". dx must not alias dresidual.
  // The default runs relu.bwd (into dresidual, or dx) and bn.bwd.
  virtual void batchnorm_relu_backward(const ExecContext& ctx, const Tensor& x, const Tensor& y,
                                       const Tensor& dy, const Tensor& gamma,
                                       const BatchNormSaved& saved, Tensor& dx, Tensor& dgamma,
                                       Tensor& dbeta, Tensor* dresidual);

  // "relu.fwd" / "relu.bwd" (y may alias x; dx may alias dy).
  virtual void relu_forward(const ExecContext& ctx, const Tensor& x, Tensor& y) = 0;
  virtual void relu_backward(const ExecContext& ctx, const Tensor& y, const Tensor& dy,
                             Tensor& dx) = 0;

  // Leaky ReLU, sigmoid, tanh: "<activation_name>.fwd" / ".bwd" (y may alias x; dx may
  // alias dy). Backward reads x (leaky ReLU's sign) or y (sigmoid: y (1 - y), tanh:
  // 1 - y^2). These and the three below have one implementation, on the host
  // (OpKernelsOnHost.cpp): a backend whose tensors live elsewhere stages them through
  // host memory unless it overrides them.
  virtual void activation_forward(const ExecContext& ctx, const ActivationParams& params,
                                  const Tensor& x, Tensor& y);
  virtual void activation_backward(const ExecContext& ctx, const ActivationParams& params,
                                   const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx);
  // "scale": y = factor * x (ONNX Mul by a constant, forward and backward; y may alias x).
  virtual void scale(const ExecContext& ctx, float factor, const Tensor& x, Tensor& y);
  // "concat": y's channels are the parts' in order (same n, h, w and layout as y; their
  // channels add up to y's). "concat.bwd": the inverse, dy's channels split into the parts.
  virtual void concat_channels(const ExecContext& ctx, std::span<const Tensor* const> parts,
                               Tensor& y);
  virtual void split_channels(const ExecContext& ctx, const Tensor& dy,
                              std::span<Tensor* const> parts);

  // "maxpool.fwd" / "maxpool.bwd": padding never wins the max; backward recomputes the
  // arg-max from x (first maximum in scan order wins ties) and routes dy there.
  virtual void maxpool_forward(const ExecContext& ctx, const PoolParams& params, const Tensor& x,
                               Tensor& y) = 0;
  virtual void maxpool_backward(const ExecContext& ctx, const PoolParams& params, const Tensor& x,
                                const Tensor& dy, Tensor& dx) = 0;

  // Conv bias, ReLU and max pooling in one pass (LeNet-5's conv -> relu -> pool under the
  // fuse knob): y = maxpool(relu(x + bias[c])), x unchanged. "bias_relu_maxpool.fwd".
  // Its gradient from x, bias, the fused output y and dy: dx gets dy at the window's first
  // maximum of x + bias where y > 0, 0 elsewhere; dbias[c] = the sum of dx over n, h, w.
  // "bias_relu_maxpool.bwd". The defaults run maxpool, bias and relu (forward: the same
  // values, as max and x + b commute exactly; backward: routed to the first maximum of x,
  // which differs only where adding the bias rounds two inputs of a window to one value).
  virtual void bias_relu_maxpool_forward(const ExecContext& ctx, const PoolParams& params,
                                         const Tensor& x, const Tensor& bias, Tensor& y);
  virtual void bias_relu_maxpool_backward(const ExecContext& ctx, const PoolParams& params,
                                          const Tensor& x, const Tensor& bias, const Tensor& y,
                                          const Tensor& dy, Tensor& dx, Tensor& dbias);

  // "avgpool.fwd" / "avgpool.bwd": divides by the full kernel area (padding counts as 0).
  virtual void avgpool_forward(const ExecContext& ctx, const PoolParams& params, const Tensor& x,
                               Tensor& y) = 0;
  virtual void avgpool_backward(const ExecContext& ctx, const PoolParams& params, const Tensor& dy,
                                Tensor& dx) = 0;

  // "gap.fwd" / "gap.bwd": global average pool, y is {N, C, 1, 1}.
  virtual void global_avgpool_forward(const ExecContext& ctx, const Tensor& x, Tensor& y) = 0;
  virtual void global_avgpool_backward(const ExecContext& ctx, const Tensor& dy, Tensor& dx) = 0;

  // "fc.fwd" / "fc.bwd_data" / "fc.bwd_weight": fully connected layer.
  // x is {N, C, H, W}; weight is {OUT, C, H, W} in x's layout, so both flatten in the
  // same physical order and the layer means the same thing in either layout;
  // bias and y are {1, OUT, 1, 1} and {N, OUT, 1, 1}. y = flat(x) * flat(weight)^T + bias.
  virtual void fc_forward(const ExecContext& ctx, const Tensor& x, const Tensor& weight,
                          const Tensor& bias, Tensor& y) = 0;
  virtual void fc_backward_data(const ExecContext& ctx, const Tensor& dy, const Tensor& weight,
                                Tensor& dx) = 0;
  virtual void fc_backward_weight(const ExecContext& ctx, const Tensor& x, const Tensor& dy,
                                  Tensor& dweight, Tensor& dbias) = 0;

  // "bias.fwd": y[n,c,h,w] += bias[c] in place. "bias.bwd": dbias[c] = sum over n,h,w of dy.
  virtual void bias_forward(const ExecContext& ctx, const Tensor& bias, Tensor& y) = 0;
  virtual void bias_backward(const ExecContext& ctx, const Tensor& dy, Tensor& dbias) = 0;

  // "add": y = a + b (residual join; y may alias a or b).
  virtual void add(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor& y) = 0;
  // "accumulate": y += x (gradient of a tensor with several consumers).
  virtual void accumulate(const ExecContext& ctx, const Tensor& x, Tensor& y) = 0;
  // "zero": fills with 0.
  virtual void zero(const ExecContext& ctx, Tensor& y) = 0;
  // "copy": y = x, same shape and layout (gradient passed through a residual join).
  virtual void copy(const ExecContext& ctx, const Tensor& x, Tensor& y) = 0;

  // "softmax_xent": mean cross-entropy of softmax(logits) against labels; logits are
  // {N, K, 1, 1}. When dlogits is not null it receives d(mean loss)/d(logits).
  // `correct` (when not null) receives the number of rows whose arg-max equals the label.
  // Labels outside [0, K) throw Error(input).
  virtual float softmax_cross_entropy(const ExecContext& ctx, const Tensor& logits,
                                      std::span<const int32_t> labels, Tensor* dlogits,
                                      int64_t* correct) = 0;

  // "sgd": velocity = momentum * velocity + (grad + weight_decay * weight);
  //        weight -= learning_rate * velocity.
  virtual void sgd_update(const ExecContext& ctx, const SgdParams& params, Tensor& weight,
                          const Tensor& grad, Tensor& velocity) = 0;

  // "transpose.nchw_to_nhwc" / "transpose.nhwc_to_nchw": y has the other layout, same shape.
  virtual void transpose(const ExecContext& ctx, const Tensor& x, Tensor& y) = 0;

  // The data movement of a split batch (replicas), traced as memcpy-kind kernels.
  // "scatter": shard rows [0, k) = batch rows [first, first + k) with k = min(shard.n,
  // batch.n - first); rows past k are zeroed (a partial last shard). Same c, h, w and
  // layout; `batch` may be a host tensor while shard is in the backend's memory (the
  // upload of a batch).
  virtual void scatter_rows(const ExecContext& ctx, const Tensor& batch, int64_t first,
                            Tensor& shard) = 0;
  // "allreduce": out = scale * sum of sources, elementwise, summed in source order so a
  // run is reproducible; out may be one of the sources, the others are left alone. All
  // have out's shape and layout. Sources may be on several devices of the backend (one
  // replica per device, Backend::replica_devices); out is on the calling lane's device.
  virtual void allreduce_sum(const ExecContext& ctx, std::span<const Tensor* const> sources,
                             float scale, Tensor& out) = 0;
  // "broadcast": copies `source` into every tensor of `targets`.
  virtual void broadcast(const ExecContext& ctx, const Tensor& source,
                         std::span<Tensor* const> targets) = 0;

  // The traffic of the update on the host (RunConfig update_on = host), traced as
  // memcpy-kind kernels: "memcpy.dtoh" copies a tensor of the backend's memory into a
  // host tensor, "memcpy.htod" a host tensor into the backend's memory; same shape and
  // layout. Ordered on the lane's stream like a kernel (on cuda an asynchronous DMA when
  // the host tensor is in the backend's pinned staging memory), so the host may read
  // `host_dst` once an event recorded after the copy has completed.
  virtual void copy_to_host(const ExecContext& ctx, const Tensor& src, Tensor& host_dst) = 0;
  virtual void copy_from_host(const ExecContext& ctx, const Tensor& host_src, Tensor& dst) = 0;
};

}  // namespace tunescope
