// Batch normalisation on the CPU: per-channel statistics and the fused normalise/scale,
// natively in NCHW (channel planes) and NHWC (rows of channel vectors).
#include <array>
#include <cmath>
#include <vector>

#include "core/base/Error.h"
#include "kernels/cpu/CpuOps.h"
#include "kernels/cpu/CpuOpsSupport.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {

using namespace ops;

namespace {

struct ChannelAffine {
  std::vector<float> center, scale, offset;
  explicit ChannelAffine(int64_t channels) : center(channels), scale(channels), offset(channels) {}
};

// y = (x - center[c]) * scale[c] + offset[c]. Subtracting the centre first keeps the
// precision when the mean is large against the spread. y may alias x.
void apply_affine(ThreadPool& pool, const Tensor& x, const ChannelAffine& a, Tensor& y) {
  const float* xd = x.data();
  float* yd = y.data();
  const float* center = a.center.data();
  const float* scale = a.scale.data();
  const float* offset = a.offset.data();
  for_each_with_channel(pool, x.shape(), x.layout(), [=](int64_t i, int64_t c) {
    yd[i] = (xd[i] - center[c]) * scale[c] + offset[c];
  });
}

void ensure_channel_tensor(Tensor& t, int64_t channels, Layout layout) {
  const Shape4 shape{1, channels, 1, 1};
  if (t.empty() || !(t.shape() == shape)) t = Tensor(shape, layout);
}

}  // namespace

void CpuOps::batchnorm_forward_train(const ExecContext& ctx, const BatchNormParams& params,
                                     const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                     Tensor& running_mean, Tensor& running_var,
                                     BatchNormSaved& saved, Tensor& y) {
  check_batchnorm_forward("bn.fwd", x, gamma, beta, running_mean, running_var, y);
  const Shape4 s = x.shape();
  const int64_t channels = s.c, per_channel = s.n * s.h * s.w;
  ensure_channel_tensor(saved.mean, channels, x.layout());
  ensure_channel_tensor(saved.inv_std, channels, x.layout());
  // Two passes over x (statistics, normalise) and one write of y.
  profiler::KernelScope scope(ctx.tracer, "bn.fwd", ctx.device, ctx.lane, 6.0 * x.size(),
                              3.0 * x.bytes());

  const float* xd = x.data();
  // One pass of sum and sum of squares, accumulated in double, so the cancellation in
  // E[x^2] - E[x]^2 stays far below float resolution.
  const auto sums = sum_per_channel<2>(ctx.pool, s, x.layout(), [xd](int64_t i, int64_t) {
    const float v = xd[i];
    return std::array<float, 2>{v, v * v};
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
  apply_affine(ctx.pool, x, affine, y);
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
  apply_affine(ctx.pool, x, affine, y);
}

void CpuOps::batchnorm_backward(const ExecContext& ctx, const Tensor& x, const Tensor& dy,
                                const Tensor& gamma, const BatchNormSaved& saved, Tensor& dx,
                                Tensor& dgamma, Tensor& dbeta) {
  check_batchnorm_backward(x, dy, gamma, saved, dx, dgamma, dbeta);
  const Shape4 s = x.shape();
  const int64_t channels = s.c;
  // Reduction reads x and dy, the dx pass reads both again and writes dx.
  profiler::KernelScope scope(ctx.tracer, "bn.bwd", ctx.device, ctx.lane, 10.0 * x.size(),
                              5.0 * x.bytes());

  const float* xd = x.data();
  const float* dyd = dy.data();
  const float* mean = saved.mean.data();
  const float* inv_std = saved.inv_std.data();
  const auto sums = sum_per_channel<2>(ctx.pool, s, x.layout(), [=](int64_t i, int64_t c) {
    const float g = dyd[i];
    return std::array<float, 2>{g, g * (xd[i] - mean[c]) * inv_std[c]};
  });

  // dx = gamma * inv_std * (dy - dbeta / M - x_hat * dgamma / M), with
  // x_hat = (x - mean) * inv_std, written as one per-channel affine map of (dy, x - mean).
  const double count = static_cast<double>(s.n * s.h * s.w);
  std::vector<float> dy_scale(channels), x_scale(channels), offset(channels);
  for (int64_t c = 0; c < channels; ++c) {
    dbeta.data()[c] = static_cast<float>(sums[0][c]);
    dgamma.data()[c] = static_cast<float>(sums[1][c]);
    const double k = static_cast<double>(gamma.data()[c]) * inv_std[c];
    dy_scale[c] = static_cast<float>(k);
    x_scale[c] = static_cast<float>(-k * inv_std[c] * sums[1][c] / count);
    offset[c] = static_cast<float>(-k * sums[0][c] / count);
  }
  float* dxd = dx.data();
  const float* a = dy_scale.data();
  const float* b = x_scale.data();
  const float* d = offset.data();
  for_each_with_channel(ctx.pool, s, x.layout(), [=](int64_t i, int64_t c) {
    dxd[i] = a[c] * dyd[i] + b[c] * (xd[i] - mean[c]) + d[c];
  });
}

}  // namespace tunescope::cpu
