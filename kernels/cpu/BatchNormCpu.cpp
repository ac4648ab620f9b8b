// Batch normalisation on the CPU, alone and fused with the ReLU after it (and the residual
// join between them): per-channel statistics and one normalise pass, natively in NCHW
// (channel planes) and NHWC (rows of channel vectors), on the vector kernels of
// ElementwiseIsa.h.
#include <cmath>
#include <vector>

#include "core/base/Error.h"
#include "kernels/cpu/ChannelRuns.h"
#include "kernels/cpu/CpuOps.h"
#include "kernels/cpu/ElementwiseIsa.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {

using namespace ops;

namespace {

struct ChannelAffine {
  std::vector<float> center, scale, offset;
  explicit ChannelAffine(int64_t channels) : center(channels), scale(channels), offset(channels) {}
};

// y = relu?((x - center[c]) * scale[c] + offset[c] + residual). Subtracting the centre
// first keeps the precision when the mean is large against the spread. y may alias x.
void apply_affine(ThreadPool& pool, const ElementwiseKernelTable& k, const Tensor& x,
                  const Tensor* residual, bool relu, const ChannelAffine& a, Tensor& y) {
  const float* xd = x.data();
  const float* rd = residual ? residual->data() : nullptr;
  float* yd = y.data();
  for_each_channel_run(pool, x.shape(), x.layout(), [&](int64_t offset, ChannelRun run, int64_t c) {
    k.channel_affine(xd + offset, rd ? rd + offset : nullptr, yd + offset, run, &a.center[c],
                     &a.scale[c], &a.offset[c], relu);
  });
}

void ensure_channel_tensor(Tensor& t, int64_t channels, Layout layout) {
  const Shape4 shape{1, channels, 1, 1};
  if (t.empty() || !(t.shape() == shape)) t = Tensor(shape, layout);
}

// bn.fwd and its fused forms: residual null or not, relu on or off.
void forward_train(const ExecContext& ctx, const char* op, const BatchNormParams& params,
                   const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor* residual,
                   bool relu, Tensor& running_mean, Tensor& running_var, BatchNormSaved& saved,
                   Tensor& y) {
  check_batchnorm_forward(op, x, gamma, beta, running_mean, running_var, y);
  if (residual) check_like(op, "residual", *residual, "x", x);
  const ElementwiseKernelTable& k = elementwise_kernels();
  const Shape4 s = x.shape();
  const int64_t channels = s.c, per_channel = s.n * s.h * s.w;
  ensure_channel_tensor(saved.mean, channels, x.layout());
  ensure_channel_tensor(saved.inv_std, channels, x.layout());
  // Two passes over x (statistics, normalise), one over the residual, one write of y.
  profiler::KernelScope scope(ctx.tracer, op, ctx.device, ctx.lane,
                              (residual ? 7.0 : 6.0) * x.size(),
                              (residual ? 4.0 : 3.0) * x.bytes());

  const float* xd = x.data();
  // Sum and sum of squares in one pass, accumulated in double, so the cancellation in
  // E[x^2] - E[x]^2 stays far below float resolution.
  const auto sums = sum_channel_runs<2>(
      ctx.pool, s, x.layout(), [&](int64_t offset, ChannelRun run, int64_t, double* const* out) {
        k.channel_moments(xd + offset, run, out[0], out[1]);
      });

  ChannelAffine affine(channels);
  const double m = params.momentum, count = static_cast<double>(per_channel);
  // Bessel's correction for the running estimate; a single value per channel has none.
  const double unbias = per_channel > 1 ? count / (count - 1.0) : 1.0;
  for (int64_t c = 0; c < channels; ++c) {
    const double mean = sums[0][c] / count;
    const double var = std::max(0.0, sums[1][c] / count - mean * mean);
    const double inv_std = 1.0 / std::sqrt(var + params.epsilon);
    saved.mean.data()[c] = static_cast<float>(mean);
    saved.inv_std.data()[c] = static_cast<float>(inv_std);
    float& rm = running_mean.data()[c];
    float& rv = running_var.data()[c];
    rm = static_cast<float>((1.0 - m) * rm + m * mean);
    rv = static_cast<float>((1.0 - m) * rv + m * var * unbias);
    affine.center[c] = static_cast<float>(mean);
    affine.scale[c] = static_cast<float>(gamma.data()[c] * inv_std);
    affine.offset[c] = beta.data()[c];
  }
  apply_affine(ctx.pool, k, x, residual, relu, affine, y);
}

// bn.bwd and its fused form: with y (the fused output) the incoming gradient is masked by
// y > 0 first, and that masked gradient goes to dresidual when it is not null.
void backward(const ExecContext& ctx, const char* op, const Tensor& x, const Tensor* y,
              const Tensor& dy, const Tensor& gamma, const BatchNormSaved& saved, Tensor& dx,
              Tensor& dgamma, Tensor& dbeta, Tensor* dresidual) {
  check_batchnorm_backward(op, x, dy, gamma, saved, dx, dgamma, dbeta);
  if (y) check_like(op, "y", *y, "x", x);
  if (dresidual) check_like(op, "dresidual", *dresidual, "x", x);
  const ElementwiseKernelTable& k = elementwise_kernels();
  const Shape4 s = x.shape();
  const int64_t channels = s.c;
  // The reduction reads x and dy (and y), the dx pass reads them again and writes dx (and
  // dresidual).
  const double reads = y ? 3.0 : 2.0, writes = dresidual ? 2.0 : 1.0;
  profiler::KernelScope scope(ctx.tracer, op, ctx.device, ctx.lane, 10.0 * x.size(),
                              (2.0 * reads + writes) * x.bytes());

  const float* xd = x.data();
  const float* yd = y ? y->data() : nullptr;
  const float* dyd = dy.data();
  const float* mean = saved.mean.data();
  const float* inv_std = saved.inv_std.data();
  const auto sums = sum_channel_runs<2>(
      ctx.pool, s, x.layout(), [&](int64_t offset, ChannelRun run, int64_t c, double* const* out) {
        k.channel_gradient_moments(xd + offset, yd ? yd + offset : nullptr, dyd + offset, run,
                                   mean + c, out[0], out[1]);
      });

  // dx = gamma * inv_std * (g - dbeta / M - x_hat * dgamma / M), with
  // x_hat = (x - mean) * inv_std, dbeta = sum g, dgamma = sum g * x_hat, written as one
  // per-channel affine map of (g, x - mean).
  const double count = static_cast<double>(s.n * s.h * s.w);
  std::vector<float> g_scale(channels), x_scale(channels), offset(channels);
  for (int64_t c = 0; c < channels; ++c) {
    const double sum_gx_hat = sums[1][c] * inv_std[c];
    dbeta.data()[c] = static_cast<float>(sums[0][c]);
    dgamma.data()[c] = static_cast<float>(sum_gx_hat);
    const double kc = static_cast<double>(gamma.data()[c]) * inv_std[c];
    g_scale[c] = static_cast<float>(kc);
    x_scale[c] = static_cast<float>(-kc * inv_std[c] * sum_gx_hat / count);
    offset[c] = static_cast<float>(-kc * sums[0][c] / count);
  }
  float* dxd = dx.data();
  float* dgd = dresidual ? dresidual->data() : nullptr;
  for_each_channel_run(ctx.pool, s, x.layout(), [&](int64_t at, ChannelRun run, int64_t c) {
    k.channel_gradient_apply(xd + at, yd ? yd + at : nullptr, dyd + at, dxd + at,
                             dgd ? dgd + at : nullptr, run, mean + c, &g_scale[c], &x_scale[c],
                             &offset[c]);
  });
}

}  // namespace

void CpuOps::batchnorm_forward_train(const ExecContext& ctx, const BatchNormParams& params,
                                     const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                     Tensor& running_mean, Tensor& running_var,
                                     BatchNormSaved& saved, Tensor& y) {
  forward_train(ctx, "bn.fwd", params, x, gamma, beta, nullptr, false, running_mean, running_var,
                saved, y);
}

void CpuOps::batchnorm_relu_forward_train(const ExecContext& ctx, const BatchNormParams& params,
                                          const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                          const Tensor* residual, Tensor& running_mean,
                                          Tensor& running_var, BatchNormSaved& saved, Tensor& y) {
  const char* op = residual ? "bn_add_relu.fwd" : "bn_relu.fwd";
  if (y.data() == x.data() && !x.empty()) fail(ErrorKind::runtime, op, ": y must not alias x");
  forward_train(ctx, op, params, x, gamma, beta, residual, true, running_mean, running_var, saved,
                y);
}

void CpuOps::batchnorm_forward_infer(const ExecContext& ctx, const BatchNormParams& params,
                                     const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                     const Tensor& running_mean, const Tensor& running_var,
                                     Tensor& y) {
  check_batchnorm_forward("bn.fwd_infer", x, gamma, beta, running_mean, running_var, y);
  profiler::KernelScope scope(ctx.tracer, "bn.fwd_infer", ctx.device, ctx.lane, 3.0 * x.size(),
                              2.0 * x.bytes());
  const int64_t channels = x.shape().c;
  ChannelAffine affine(channels);
  for (int64_t c = 0; c < channels; ++c) {
    affine.center[c] = running_mean.data()[c];
    affine.scale[c] = static_cast<float>(
        gamma.data()[c] / std::sqrt(static_cast<double>(running_var.data()[c]) + params.epsilon));
    affine.offset[c] = beta.data()[c];
  }
  apply_affine(ctx.pool, elementwise_kernels(), x, nullptr, false, affine, y);
}

void CpuOps::batchnorm_backward(const ExecContext& ctx, const Tensor& x, const Tensor& dy,
                                const Tensor& gamma, const BatchNormSaved& saved, Tensor& dx,
                                Tensor& dgamma, Tensor& dbeta) {
  backward(ctx, "bn.bwd", x, nullptr, dy, gamma, saved, dx, dgamma, dbeta, nullptr);
}

void CpuOps::batchnorm_relu_backward(const ExecContext& ctx, const Tensor& x, const Tensor& y,
                                     const Tensor& dy, const Tensor& gamma,
                                     const BatchNormSaved& saved, Tensor& dx, Tensor& dgamma,
                                     Tensor& dbeta, Tensor* dresidual) {
  const char* op = dresidual ? "bn_add_relu.bwd" : "bn_relu.bwd";
  if (dresidual && dresidual->data() == dx.data() && !dx.empty())
    fail(ErrorKind::runtime, op, ": dx must not alias dresidual");
  backward(ctx, op, x, &y, dy, gamma, saved, dx, dgamma, dbeta, dresidual);
}

}  // namespace tunescope::cpu
