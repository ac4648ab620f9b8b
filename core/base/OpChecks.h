// Argument checks of the OpKernels contract (core/base/OpKernels.h), shared by every
// backend's ops so the CPU and CUDA kernels accept and refuse exactly the same calls.
// They only read shapes, layouts and (for the loss) the host-side labels, never tensor
// data, so they run on the host before any device work is enqueued. Each throws
// Error(runtime) "<op>: <name> ..." naming the shapes involved (labels: Error(input)).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <utility>

#include "core/base/OpKernels.h"
#include "core/base/Tensor.h"

namespace tunescope::op_checks {

void check_present(const char* op, const char* name, const Tensor& t);
void check_shape(const char* op, const char* name, const Tensor& t, const Shape4& expected);
// Same shape and same layout as `ref`.
void check_like(const char* op, const char* name, const Tensor& t, const char* ref_name,
                const Tensor& ref);
// A per-channel parameter: {1, channels, 1, 1}, either layout (both store it the same way).
void check_channel_param(const char* op, const char* name, const Tensor& t, int64_t channels);

using NamedTensor = std::pair<const char*, const Tensor*>;
// An elementwise op: the first tensor present, every other of its shape and layout.
void check_elementwise(const char* op, std::initializer_list<NamedTensor> tensors);
// "bias.fwd" / "bias.bwd": `data` present, `param` a per-channel parameter of its channels.
void check_per_channel(const char* op, const char* data_name, const Tensor& data,
                       const char* param_name, const Tensor& param);

// "bn.fwd" / "bn.fwd_infer": y like x, the four per-channel parameters of x's channels.
void check_batchnorm_forward(const char* op, const Tensor& x, const Tensor& gamma,
                             const Tensor& beta, const Tensor& running_mean,
                             const Tensor& running_var, const Tensor& y);
// "bn.bwd" (and the fused "bn_relu.bwd"): dy and dx like x, the per-channel tensors of x's
// channels.
void check_batchnorm_backward(const char* op, const Tensor& x, const Tensor& dy,
                              const Tensor& gamma, const BatchNormSaved& saved, const Tensor& dx,
                              const Tensor& dgamma, const Tensor& dbeta);

// A pooling call where `in` has the input shape and `out` the output shape; returns
// that output shape. The padding must be smaller than the kernel, so that no window
// lies wholly in the padding.
Shape4 check_pool(const char* op, const PoolParams& params, const Tensor& in, const char* in_name,
                  const Tensor& out, const char* out_name);
// "gap.fwd" / "gap.bwd": `pooled` is {N, C, 1, 1} of `full` in the same layout.
void check_global_pool(const char* op, const Tensor& full, const char* full_name,
                       const Tensor& pooled, const char* pooled_name);

// The fully connected layer: `data` ({N, C, H, W}) and `weight` ({OUT, C, H, W}) in one
// layout; the {N, OUT, 1, 1} side (y or dy) in the data's layout.
void check_fc_weight(const char* op, const char* data_name, const Tensor& data,
                     const char* weight_name, const Tensor& weight);
void check_fc_outputs(const char* op, const char* name, const Tensor& t, int64_t batch,
                      int64_t outputs, Layout layout);

// "softmax_xent": logits {N, K, 1, 1}, N labels in [0, K) (Error(input) otherwise),
// dlogits (when given) like the logits.
void check_softmax_cross_entropy(const Tensor& logits, std::span<const int32_t> labels,
                                 const Tensor* dlogits);

// "transpose": same shape, the other layout.
void check_transpose(const Tensor& x, const Tensor& y);

// The collectives: "scatter" rows from `first` of `batch` into `shard` (same c, h, w
// and layout, first inside the batch); "allreduce"/"broadcast" tensors alike.
void check_scatter(const Tensor& batch, int64_t first, const Tensor& shard);
void check_alike(const char* op, const Tensor& a, const Tensor& b);

// A BLAS dimension or leading dimension as the int the BLAS interfaces take;
// Error(unsupported) beyond INT_MAX.
int blas_int(int64_t value);

}  // namespace tunescope::op_checks
