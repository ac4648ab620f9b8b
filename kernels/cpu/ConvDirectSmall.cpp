// The "direct-small" convolution algorithm: direct convolution for layers with few input
// channels (a network's stem: LeNet-5's conv1 has 1, ResNet's 3), NCHW, stride 1, on the
// vector kernels of SmallConvKernels.h. Each output row is computed in vectors along the
// row, eight output channels at a time, from a zero-padded copy of the image; no column
// matrix is built, which is what makes gemm (im2col) and the libraries' blocked kernels
// slow on these layers: there the work per input value is only K x R x S multiply-adds.
//
// The batch is cut into groups fixed by the problem (so the workspace and the order of
// backward filter's sums do not depend on the pool); each group has its own scratch and
// partial filter gradient, reduced in group order at the end.
// TUNESCOPE_SMALL_CONV_ISA=scalar|avx2|avx512 forces a kernel path (read on every pass).
#include <algorithm>
#include <memory>
#include <string>

#include "core/base/ConvAlgorithm.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuIsa.h"
#include "kernels/cpu/SmallConvKernelTable.h"
#include "kernels/shared/ConvArgs.h"
#include "kernels/shared/WorkspaceLayout.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {
namespace {

constexpr const char* kName = "direct-small";
constexpr const char* kIsaVariable = "TUNESCOPE_SMALL_CONV_ISA";
// Past these the per-value work is large enough for the blocked library kernels.
constexpr int64_t kMaxInputChannels = 8;
constexpr int64_t kMaxOutputChannels = 64;
// Groups per parallel slot: a few more groups than threads, so a thread the machine
// preempts holds up less of the pass.
constexpr int64_t kGroupsPerSlot = 4;

const SmallConvKernelTable& kernels() {
  switch (cpu_isa_from_environment(kIsaVariable)) {
    case CpuIsa::avx512: return kSmallConvAvx512Kernels;
    case CpuIsa::avx2: return kSmallConvAvx2Kernels;
    default: return kSmallConvScalarKernels;
  }
}

struct Plan {
  SmallConvImage g;
  int64_t groups = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t x_floats = 0, dyz_floats = 0, dyp_floats = 0;  // per group
  size_t filters = 0, scratch = 0, partials = 0, bytes = 0;
  int64_t scratch_floats = 0;  // per group

  explicit Plan(const ConvProblem& p) {
    const Shape4 out = p.output();
    g.c = p.input.c;
    g.k = p.out_channels;
    g.r = p.kernel_h;
    g.s = p.kernel_w;
    g.in_h = p.input.h + 2 * p.pad_h;
    g.in_w = p.input.w + 2 * p.pad_w;
    g.out_h = out.h;
    g.out_w = out.w;
    pad_h = p.pad_h;
    pad_w = p.pad_w;
    groups = std::min(p.input.n, kGroupsPerSlot * parallel_slots(p));
    const int64_t blocks_k = ceil_div(g.k, kSmallConvBlock),
                  blocks_c = ceil_div(g.c, kSmallConvBlock);
    x_floats = g.c * g.in_h * g.in_w + kSmallConvSlack;
    dyz_floats =
        blocks_k * kSmallConvBlock * g.out_h * round_up(g.out_w, kSmallConvSlack) + kSmallConvSlack;
    dyp_floats = g.k * (g.out_h + 2 * (g.r - 1)) * (g.out_w + 2 * (g.s - 1)) + kSmallConvSlack;
    // One group's scratch serves any pass: x (and dyz or dx), or dyp and dx.
    scratch_floats = std::max(x_floats + dyz_floats, dyp_floats + x_floats) + g.k * g.c * g.r * g.s;
    WorkspaceLayout layout;
    filters = layout.add_floats(std::max(blocks_k, blocks_c) * kSmallConvBlock *
                                std::max(g.k, g.c) * g.r * g.s);
    scratch = layout.add_floats(groups * round_up(scratch_floats, 16));
    bytes = layout.total_bytes();
  }
  float* group_scratch(void* workspace, int64_t group) const {
    return WorkspaceLayout::at(workspace, scratch) + group * round_up(scratch_floats, 16);
  }
  int64_t first_image(int64_t group, int64_t n) const { return group * n / groups; }
};

// The image's channel planes into x with the padding zeroed.
void copy_padded(const Plan& plan, const float* image, int64_t channels, int64_t h, int64_t w,
                 float* x) {
  const SmallConvImage& g = plan.g;
  std::fill_n(x, channels * g.in_h * g.in_w + kSmallConvSlack, 0.0f);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < h; ++i)
      std::copy_n(image + (c * h + i) * w, w,
                  x + (c * g.in_h + i + plan.pad_h) * g.in_w + plan.pad_w);
}

class ConvDirectSmall final : public ConvAlgorithm {
 public:
  std::string name() const override { return kName; }
  std::string unsupported_reason(const ConvProblem& p) const override {
    if (std::string invalid = invalid_problem_reason(p); !invalid.empty()) return invalid;
    if (p.layout != Layout::NCHW) return "direct-small runs NCHW only";
    if (p.stride_h != 1 || p.stride_w != 1) return "direct-small runs stride 1 only";
    if (p.input.c > kMaxInputChannels || p.out_channels > kMaxOutputChannels)
      return cat("direct-small is for few channels (at most ", kMaxInputChannels, " in and ",
                 kMaxOutputChannels, " out)");
    return {};
  }
  size_t workspace_bytes(const ConvProblem& p) const override { return Plan(p).bytes; }

  void forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) override {
    const ConvProblem& p = call.problem;
    const int64_t image_in = p.input.item_count(), image_out = p.output().item_count();
    run_pass(call, ConvPass::forward, "direct-small.fwd", x, w, y, w.data(),
             [&](const Pass& pass, float* xp, int64_t n) {
               copy_padded(pass.plan, x.data() + n * image_in, pass.plan.g.c, p.input.h, p.input.w,
                           xp);
               pass.kernels.forward(pass.plan.g, xp, pass.filters, y.data() + n * image_out);
             });
  }

  void backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) override {
    const ConvProblem& p = call.problem;
    const int64_t image_in = p.input.item_count(), image_out = p.output().item_count();
    run_pass(call, ConvPass::backward_data, "direct-small.bwd_data", dy, w, dx, w.data(),
             [&](const Pass& pass, float* dyp, int64_t n) {
               const Plan& plan = pass.plan;
               const SmallConvImage& g = plan.g;
               // dy padded by R - 1 rows and S - 1 columns all round: the row of a full
               // correlation.
               Plan dy_pad = plan;
               dy_pad.g = SmallConvImage{
                   .c = g.k, .in_h = g.out_h + 2 * (g.r - 1), .in_w = g.out_w + 2 * (g.s - 1)};
               dy_pad.pad_h = g.r - 1;
               dy_pad.pad_w = g.s - 1;
               float* dxp = dyp + plan.dyp_floats;
               copy_padded(dy_pad, dy.data() + n * image_out, g.k, g.out_h, g.out_w, dyp);
               pass.kernels.backward_data(g, dyp, pass.filters, dxp);
               float* out = dx.data() + n * image_in;
               for (int64_t c = 0; c < g.c; ++c)
                 for (int64_t i = 0; i < p.input.h; ++i)
                   std::copy_n(dxp + (c * g.in_h + i + plan.pad_h) * g.in_w + plan.pad_w, p.input.w,
                               out + (c * p.input.h + i) * p.input.w);
             });
  }

  // Each group sums its images into its own partial gradient (after its x and dyz in the
  // scratch); the partials are added up in group order.
  void backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                       Tensor& dw) override {
    const ConvProblem& p = call.problem;
    const int64_t image_in = p.input.item_count(), image_out = p.output().item_count();
    const auto partial = [&](const Plan& plan, float* scratch) {
      return scratch + plan.x_floats + plan.dyz_floats;
    };
    run_pass(
        call, ConvPass::backward_filter, "direct-small.bwd_filter", x, dy, dw, nullptr,
        [&](const Pass& pass, float* xp, int64_t n) {
          const Plan& plan = pass.plan;
          const SmallConvImage& g = plan.g;
          const int64_t row = round_up(g.out_w, kSmallConvSlack), dyz_plane = g.out_h * row;
          float* dyz = xp + plan.x_floats;
          copy_padded(plan, x.data() + n * image_in, g.c, p.input.h, p.input.w, xp);
          const float* d = dy.data() + n * image_out;
          for (int64_t kk = 0; kk < g.k; ++kk)
            for (int64_t oh = 0; oh < g.out_h; ++oh)
              std::copy_n(d + (kk * g.out_h + oh) * g.out_w, g.out_w,
                          dyz + kk * dyz_plane + oh * row);
          pass.kernels.backward_filter(g, xp, dyz, partial(plan, xp));
        },
        [&](const Plan& plan, float* scratch) {
          std::fill_n(partial(plan, scratch), plan.g.k * plan.g.c * plan.g.r * plan.g.s, 0.0f);
          std::fill_n(scratch + plan.x_floats, plan.dyz_floats, 0.0f);
        },
        [&](const Plan& plan) {
          const int64_t filter = plan.g.k * plan.g.c * plan.g.r * plan.g.s;
          float* out = dw.data();
          std::copy_n(partial(plan, plan.group_scratch(call.workspace, 0)), filter, out);
          for (int64_t group = 1; group < plan.groups; ++group) {
            const float* part = partial(plan, plan.group_scratch(call.workspace, group));
            for (int64_t i = 0; i < filter; ++i) out[i] += part[i];
          }
        });
  }

 private:
  // What every image of a pass gets: the plan, the kernel path and the repacked filter.
  struct Pass {
    const Plan& plan;
    const SmallConvKernelTable& kernels;
    const float* filters;
  };

  // One pass, the same in all three: the checks, one trace record, the filter repacked
  // for the pass (forward: blocks of output channels; backward data: of input channels;
  // backward filter reads none), then per group on the pool start(plan, scratch) and
  // image(pass, scratch, n) for each of its images, and finish(plan) at the end.
  template <class Image, class Start = void (*)(const Plan&, float*),
            class Finish = void (*)(const Plan&)>
  void run_pass(
      const ConvCall& call, ConvPass pass, const char* kernel, const Tensor& a, const Tensor& b,
      const Tensor& out, const float* w, const Image& image,
      const Start& start = [](const Plan&, float*) {},
      const Finish& finish = [](const Plan&) {}) const {
    const ConvProblem& p = call.problem;
    check_conv_args(name(), pass, p, a, b, out);
    if (std::string why = unsupported_reason(p); !why.empty())
      fail(ErrorKind::runtime, name(), ": ", p.key(), ": ", why);
    const Plan plan(p);
    check_workspace(name(), call, plan.bytes);
    const ExecContext& ex = call.exec;
    profiler::KernelScope scope(ex.tracer, kernel, ex.device, ex.lane, p.flops(),
                                conv_pass_bytes(p));
    float* filters = WorkspaceLayout::at(call.workspace, plan.filters);
    if (w)
      repack(w, plan.g.k, plan.g.c, plan.g.r * plan.g.s,
             /*block_outer=*/pass == ConvPass::forward, filters);
    const Pass context{plan, kernels(), filters};
    ex.pool.parallel_for(plan.groups, [&](int64_t first, int64_t last) {
      for (int64_t group = first; group < last; ++group) {
        float* scratch = plan.group_scratch(call.workspace, group);
        start(plan, scratch);
        for (int64_t n = plan.first_image(group, p.input.n);
             n < plan.first_image(group + 1, p.input.n); ++n)
          image(context, scratch, n);
      }
    });
    finish(plan);
  }

  // w[k][c][taps] into blocks of eight: [k / 8][c][taps][k % 8] (block_outer, for forward)
  // or [c / 8][k][taps][c % 8], zero past the last channel of the block.
  static void repack(const float* w, int64_t k, int64_t c, int64_t taps, bool block_outer,
                     float* out) {
    const int64_t B = kSmallConvBlock;
    const int64_t outer = block_outer ? k : c, inner = block_outer ? c : k;
    const int64_t blocks = ceil_div(outer, B);
    std::fill_n(out, blocks * B * inner * taps, 0.0f);
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t cc = 0; cc < c; ++cc)
        for (int64_t t = 0; t < taps; ++t) {
          const int64_t o = block_outer ? kk : cc, i = block_outer ? cc : kk;
          out[((o / B * inner + i) * taps + t) * B + o % B] = w[(kk * c + cc) * taps + t];
        }
  }
};

const ConvAlgorithmRegistration registration("cpu", kName, [](const KnobValues&) {
  return std::make_unique<ConvDirectSmall>();
});

}  // namespace
}  // namespace tunescope::cpu
