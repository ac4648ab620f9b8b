// The ops of OpKernels with one implementation for every backend, computed on the host:
// the activations besides ReLU, the scale of ONNX's Mul by a constant and the channel
// concatenation. Tensors in host memory are used in place; a device backend's are
// staged (its memory copies are ordered after its queued work, so this is correct,
// not fast: a backend with its own kernels overrides these).
#include <algorithm>
#include <cmath>
#include <deque>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/base/Error.h"
#include "core/base/OpChecks.h"
#include "core/base/OpKernels.h"
#include "core/base/ThreadPool.h"
#include "profiler/Tracer.h"

namespace tunescope {

namespace {

constexpr int64_t kGrain = 16384;  // elements per parallel chunk

// Host views of an op's tensors: the tensors themselves when on the host, else copies,
// with the outputs copied back by finish().
class HostView {
 public:
  const Tensor& in(const Tensor& t) {
    if (t.on_host()) return t;
    return staged_.emplace_back(to_host(t));
  }
  Tensor& out(Tensor& t) {
    if (t.on_host()) return t;
    targets_.push_back({&t, staged_.size()});
    return staged_.emplace_back(to_host(t));
  }
  void finish() {
    for (const auto& [target, index] : targets_) copy_tensor(staged_[index], *target);
  }

 private:
  std::deque<Tensor> staged_;  // stable addresses
  std::vector<std::pair<Tensor*, size_t>> targets_;
};

// Kernel names are kept by the tracer as pointers: literals only.
const char* kernel_name(Activation kind, bool forward) {
  switch (kind) {
    case Activation::leaky_relu: return forward ? "leaky_relu.fwd" : "leaky_relu.bwd";
    case Activation::sigmoid: return forward ? "sigmoid.fwd" : "sigmoid.bwd";
    case Activation::tanh: return forward ? "tanh.fwd" : "tanh.bwd";
  }
  return "?";
}

// Checks that the parts fit `whole` (same n, h, w and layout) and returns their channels.
int64_t part_channels(const char* op, const Tensor& whole, std::span<const Tensor* const> parts) {
  op_checks::check_present(op, "whole", whole);
  int64_t channels = 0;
  for (const Tensor* part : parts) {
    if (!part) fail(ErrorKind::runtime, op, ": a part is missing");
    op_checks::check_present(op, "part", *part);
    const Shape4 s = part->shape(), w = whole.shape();
    if (s.n != w.n || s.h != w.h || s.w != w.w || part->layout() != whole.layout())
      fail(ErrorKind::runtime, op, ": part ", s.str(), " ", to_string(part->layout()),
           " does not fit ", w.str(), " ", to_string(whole.layout()));
    channels += s.c;
  }
  if (channels != whole.shape().c)
    fail(ErrorKind::runtime, op, ": parts of ", channels, " channels for ", whole.shape().str());
  return channels;
}

// dst's channels [dst_c0, dst_c0 + channels) = src's [src_c0, ...): one contiguous run per
// image (NCHW) or per pixel (NHWC).
void copy_channels(const Tensor& src, int64_t src_c0, Tensor& dst, int64_t dst_c0, int64_t channels,
                   ThreadPool& pool) {
  const Shape4 s = src.shape();
  const Strides4 ss = src.strides(), ds = dst.strides();
  const bool nchw = src.layout() == Layout::NCHW;
  const int64_t runs = nchw ? s.n : s.n * s.h * s.w;
  const int64_t run = nchw ? channels * s.h * s.w : channels;
  const int64_t src_step = nchw ? ss.n : ss.w, dst_step = nchw ? ds.n : ds.w;
  const float* sd = src.data() + src_c0 * ss.c;
  float* dd = dst.data() + dst_c0 * ds.c;
  pool.parallel_for(
      runs,
      [=](int64_t first, int64_t end) {
        for (int64_t i = first; i < end; ++i)
          std::copy_n(sd + i * src_step, run, dd + i * dst_step);
      },
      std::max<int64_t>(1, kGrain / std::max<int64_t>(1, run)));
}

}  // namespace

const char* activation_name(Activation kind) {
  switch (kind) {
    case Activation::leaky_relu: return "leaky_relu";
    case Activation::sigmoid: return "sigmoid";
    case Activation::tanh: return "tanh";
  }
  return "?";
}

void OpKernels::activation_forward(const ExecContext& ctx, const ActivationParams& params,
                                   const Tensor& x, Tensor& y) {
  const char* name = kernel_name(params.kind, true);
  op_checks::check_elementwise(name, {{"x", &x}, {"y", &y}});
  profiler::KernelScope scope(ctx.tracer, name, ctx.device, ctx.lane, 4.0 * x.size(),
                              2.0 * x.bytes());
  HostView host;
  const float* xd = host.in(x).data();
  float* yd = host.out(y).data();
  const Activation kind = params.kind;
  const float alpha = params.alpha;
  ctx.pool.parallel_for(
      x.size(),
      [=](int64_t first, int64_t end) {
        for (int64_t i = first; i < end; ++i) {
          const float v = xd[i];
          switch (kind) {
            case Activation::leaky_relu: yd[i] = v < 0.0f ? alpha * v : v; break;
            case Activation::sigmoid: yd[i] = 1.0f / (1.0f + std::exp(-v)); break;
            case Activation::tanh: yd[i] = std::tanh(v); break;
          }
        }
      },
      kGrain);
  host.finish();
}

void OpKernels::activation_backward(const ExecContext& ctx, const ActivationParams& params,
                                    const Tensor& x, const Tensor& y, const Tensor& dy,
                                    Tensor& dx) {
  const char* name = kernel_name(params.kind, false);
  op_checks::check_elementwise(name, {{"x", &x}, {"y", &y}, {"dy", &dy}, {"dx", &dx}});
  profiler::KernelScope scope(ctx.tracer, name, ctx.device, ctx.lane, 3.0 * x.size(),
                              3.0 * x.bytes());
  HostView host;
  const float* xd = host.in(x).data();
  const float* yd = host.in(y).data();
  const float* dyd = host.in(dy).data();
  float* dxd = host.out(dx).data();
  const Activation kind = params.kind;
  const float alpha = params.alpha;
  ctx.pool.parallel_for(
      x.size(),
      [=](int64_t first, int64_t end) {
        for (int64_t i = first; i < end; ++i) {
          const float g = dyd[i];
          switch (kind) {
            case Activation::leaky_relu: dxd[i] = xd[i] < 0.0f ? alpha * g : g; break;
            case Activation::sigmoid: dxd[i] = g * yd[i] * (1.0f - yd[i]); break;
            case Activation::tanh: dxd[i] = g * (1.0f - yd[i] * yd[i]); break;
          }
        }
      },
      kGrain);
  host.finish();
}

void OpKernels::scale(const ExecContext& ctx, float factor, const Tensor& x, Tensor& y) {
  op_checks::check_elementwise("scale", {{"x", &x}, {"y", &y}});
  profiler::KernelScope scope(ctx.tracer, "scale", ctx.device, ctx.lane, 1.0 * x.size(),
                              2.0 * x.bytes());
  HostView host;
  const float* xd = host.in(x).data();
  float* yd = host.out(y).data();
  ctx.pool.parallel_for(
      x.size(),
      [=](int64_t first, int64_t end) {
        for (int64_t i = first; i < end; ++i) yd[i] = factor * xd[i];
      },
      kGrain);
  host.finish();
}

void OpKernels::concat_channels(const ExecContext& ctx, std::span<const Tensor* const> parts,
                                Tensor& y) {
  part_channels("concat", y, parts);
  profiler::KernelScope scope(ctx.tracer, "concat", ctx.device, ctx.lane, 0, 2.0 * y.bytes());
  HostView host;
  Tensor& out = host.out(y);
  int64_t offset = 0;
  for (const Tensor* part : parts) {
    copy_channels(host.in(*part), 0, out, offset, part->shape().c, ctx.pool);
    offset += part->shape().c;
  }
  host.finish();
}

void OpKernels::split_channels(const ExecContext& ctx, const Tensor& dy,
                               std::span<Tensor* const> parts) {
  part_channels("concat.bwd", dy, std::vector<const Tensor*>(parts.begin(), parts.end()));
  profiler::KernelScope scope(ctx.tracer, "concat.bwd", ctx.device, ctx.lane, 0, 2.0 * dy.bytes());
  HostView host;
  const Tensor& whole = host.in(dy);
  int64_t offset = 0;
  for (Tensor* part : parts) {
    copy_channels(whole, offset, host.out(*part), 0, part->shape().c, ctx.pool);
    offset += part->shape().c;
  }
  host.finish();
}

}  // namespace tunescope
