// The "direct-lanes" convolution algorithm: direct convolution with the batch across the
// vector lanes, for small layers (LeNet-5's, a net's stem) in NCHW or NHWC at stride 1.
// Sixteen images at a time are transposed into [channel][h][w][image] blocks (padding
// written as zeros on the way), the kernels of LaneConvKernels.h run on those, and the
// result is transposed back. Every lane of every vector is a useful image whatever the
// channel counts and row widths, which is what vectors along rows (direct-small: rows of
// 10 in LeNet-5's conv2) or along channels (6 of them in conv1's output) lack, and no
// column matrix or library reorder is needed. Backward data scatters each dy value into the
// dx values it reaches (without padding) or is the forward correlation on dy padded by
// R - 1 - pad with the filter flipped; backward filter sums each block's lanes.
//
// The blocks are cut into groups fixed by the problem (so the workspace and the order of
// backward filter's sums do not depend on the pool); each group has its own scratch and
// partial filter gradient, reduced in group order at the end.
//
// With a ConvCall::saved buffer, forward transposes x into it (every block's, padding
// included) instead of into the group's scratch, and backward filter reads x's blocks from
// there while x is the tensor forward saw, so x is transposed once per step, not twice.
// TUNESCOPE_LANE_CONV_ISA=scalar|avx2|avx512 forces a kernel path (read on every pass).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "core/base/ConvAlgorithm.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuIsa.h"
#include "kernels/cpu/LaneConvKernelTable.h"
#include "kernels/shared/ConvArgs.h"
#include "kernels/shared/SavedByForward.h"
#include "kernels/shared/WorkspaceLayout.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {
namespace {

constexpr const char* kName = "direct-lanes";
constexpr const char* kIsaVariable = "TUNESCOPE_LANE_CONV_ISA";
constexpr int64_t L = kLaneBlock;
// Per image, the transposed input and output planes of one block must stay cache-sized
// (256 KiB per image, 4 MiB per block of sixteen): larger layers are the blocked library
// kernels' and Winograd's.
constexpr int64_t kMaxFloatsPerImage = 64 * 1024;
// Groups per parallel slot: a few more groups than threads, so a thread the machine
// preempts holds up less of the pass.
constexpr int64_t kGroupsPerSlot = 4;

const LaneConvKernelTable& kernels() {
  switch (cpu_isa_from_environment(kIsaVariable)) {
    case CpuIsa::avx512: return kLaneConvAvx512Kernels;
    case CpuIsa::avx2: return kLaneConvAvx2Kernels;
    default: return kLaneConvScalarKernels;
  }
}

// Element strides of a tensor of shape (n, c, h, w) in its layout.
struct Strides {
  int64_t n, c, h, w;
  Strides(const Shape4& s, Layout layout)
      : n(s.c * s.h * s.w),
        c(layout == Layout::NCHW ? s.h * s.w : 1),
        h(layout == Layout::NCHW ? s.w : s.w * s.c),
        w(layout == Layout::NCHW ? 1 : s.c) {}
};

struct Plan {
  LaneConvImage forward, backward_data;  // backward filter uses forward's
  int64_t pad_h = 0, pad_w = 0, flip_pad_h = 0, flip_pad_w = 0;
  bool scatter = false;  // backward data by scatter_data (no padding, filter narrow enough)
  int64_t blocks = 1, groups = 1;
  int64_t a_floats = 0, b_floats = 0, filter_floats = 0;  // per group
  int64_t x_block_floats = 0;  // one block of x as forward transposes it (padded)
  size_t weights = 0, scratch = 0, bytes = 0, saved_bytes = 0;

  explicit Plan(const ConvProblem& p) {
    const Shape4 out = p.output();
    const int64_t c = p.input.c, k = p.out_channels, r = p.kernel_h, s = p.kernel_w;
    pad_h = p.pad_h;
    pad_w = p.pad_w;
    flip_pad_h = r - 1 - p.pad_h;
    flip_pad_w = s - 1 - p.pad_w;
    forward = LaneConvImage{.c = c,
                            .k = k,
                            .r = r,
                            .s = s,
                            .in_h = p.input.h + 2 * pad_h,
                            .in_w = p.input.w + 2 * pad_w,
                            .out_h = out.h,
                            .out_w = out.w,
                            .rows_begin = pad_h,
                            .rows_end = pad_h + p.input.h,
                            .cols_begin = pad_w,
                            .cols_end = pad_w + p.input.w};
    backward_data = LaneConvImage{.c = k,
                                  .k = c,
                                  .r = r,
                                  .s = s,
                                  .in_h = out.h + 2 * flip_pad_h,
                                  .in_w = out.w + 2 * flip_pad_w,
                                  .out_h = p.input.h,
                                  .out_w = p.input.w,
                                  .rows_begin = flip_pad_h,
                                  .rows_end = flip_pad_h + out.h,
                                  .cols_begin = flip_pad_w,
                                  .cols_end = flip_pad_w + out.w};
    scatter = p.pad_h == 0 && p.pad_w == 0 && s <= kLaneScatterMaxColumns;
    blocks = ceil_div(p.input.n, L);
    groups = std::min(blocks, kGroupsPerSlot * parallel_slots(p));
    a_floats =
        std::max(c * forward.in_h * forward.in_w, k * backward_data.in_h * backward_data.in_w) * L;
    b_floats = std::max(k * out.h * out.w, c * p.input.h * p.input.w) * L;
    filter_floats = k * c * r * s;
    x_block_floats = round_up(c * forward.in_h * forward.in_w * L, 16);
    WorkspaceLayout layout;
    weights = layout.add_floats(filter_floats);
    scratch = layout.add_floats(groups * group_floats());
    bytes = layout.total_bytes();
    WorkspaceLayout saved;
    saved.add_floats(blocks * x_block_floats);
    saved_bytes = saved.total_bytes();
  }
  int64_t floats_per_image() const { return (a_floats + b_floats) / L; }
  int64_t group_floats() const { return round_up(a_floats + b_floats + filter_floats, 16); }
  float* a(void* workspace, int64_t group) const {
    return WorkspaceLayout::at(workspace, scratch) + group * group_floats();
  }
  float* b(void* workspace, int64_t group) const { return a(workspace, group) + a_floats; }
  float* partial(void* workspace, int64_t group) const { return b(workspace, group) + b_floats; }
  int64_t first_block(int64_t group) const { return group * blocks / groups; }
  // Block b of x in the saved buffer (image n0 = b * L).
  float* saved_x(void* saved, int64_t n0) const {
    return WorkspaceLayout::at(saved, 0) + n0 / L * x_block_floats;
  }
};

// Images [n0, n0 + count) of t, shape (., c, h, w), into block[c][h + pad_h][w + pad_w][lane]
// of a plane padded_h x padded_w; padding and lanes past count are zero. NCHW runs whole
// planes (unpadded) or rows through the kernels' vector transposes.
void to_lanes(const LaneConvKernelTable& kernels, const Tensor& t, int64_t n0, int64_t count,
              int64_t pad_h, int64_t pad_w, int64_t padded_h, int64_t padded_w, float* block) {
  const Shape4 s = t.shape();
  const Strides st(s, t.layout());
  const float* images = t.data() + n0 * st.n;
  const bool padded = padded_h != s.h || padded_w != s.w;
  if (t.layout() == Layout::NCHW && !padded) {
    for (int64_t c = 0; c < s.c; ++c)
      kernels.to_lanes(images + c * st.c, st.n, count, s.h * s.w, block + c * s.h * s.w * L);
    return;
  }
  std::fill_n(block, s.c * padded_h * padded_w * L, 0.0f);
  if (t.layout() == Layout::NCHW) {
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t h = 0; h < s.h; ++h)
        kernels.to_lanes(images + c * st.c + h * st.h, st.n, count, s.w,
                         block + ((c * padded_h + h + pad_h) * padded_w + pad_w) * L);
    return;
  }
  for (int64_t lane = 0; lane < count; ++lane) {
    const float* image = images + lane * st.n;
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t h = 0; h < s.h; ++h) {
        float* row = block + ((c * padded_h + h + pad_h) * padded_w + pad_w) * L + lane;
        const float* in = image + c * st.c + h * st.h;
        for (int64_t w = 0; w < s.w; ++w) row[w * L] = in[w * st.w];
      }
  }
}

// block[c][h][w][lane] (unpadded) back into images [n0, n0 + count) of t.
void from_lanes(const LaneConvKernelTable& kernels, const float* block, int64_t n0, int64_t count,
                Tensor& t) {
  const Shape4 s = t.shape();
  const Strides st(s, t.layout());
  float* images = t.data() + n0 * st.n;
  if (t.layout() == Layout::NCHW) {
    for (int64_t c = 0; c < s.c; ++c)
      kernels.from_lanes(block + c * s.h * s.w * L, s.h * s.w, count, images + c * st.c, st.n);
    return;
  }
  for (int64_t lane = 0; lane < count; ++lane) {
    float* image = images + lane * st.n;
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t h = 0; h < s.h; ++h) {
        const float* row = block + (c * s.h + h) * s.w * L + lane;
        float* out = image + c * st.c + h * st.h;
        for (int64_t w = 0; w < s.w; ++w) out[w * st.w] = row[w * L];
      }
  }
}

class ConvDirectLanes final : public ConvAlgorithm {
 public:
  std::string name() const override { return kName; }
  std::string unsupported_reason(const ConvProblem& p) const override {
    if (std::string invalid = invalid_problem_reason(p); !invalid.empty()) return invalid;
    if (p.stride_h != 1 || p.stride_w != 1) return "direct-lanes runs stride 1 only";
    if (p.pad_h >= p.kernel_h || p.pad_w >= p.kernel_w)
      return "direct-lanes needs padding smaller than the kernel";
    if (const int64_t floats = Plan(p).floats_per_image(); floats > kMaxFloatsPerImage)
      return cat("direct-lanes is for small layers: this one's input and output planes take ",
                 floats, " floats per image (at most ", kMaxFloatsPerImage, ")");
    return {};
  }
  size_t workspace_bytes(const ConvProblem& p) const override { return Plan(p).bytes; }
  size_t saved_bytes(const ConvProblem& p) const override {
    return unsupported_reason(p).empty() ? Plan(p).saved_bytes : 0;
  }

  void forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) override {
    const Plan plan = checked_plan(call, ConvPass::forward, x, w, y);
    const LaneConvKernelTable& k = kernels();
    float* wt = WorkspaceLayout::at(call.workspace, plan.weights);
    const LaneConvImage& g = plan.forward;
    saved_by_forward_.forget();
    // w(k, c, r, s) (either layout) as wt[c][r][s][k]
    for (int64_t k = 0; k < g.k; ++k)
      for (int64_t c = 0; c < g.c; ++c)
        for (int64_t r = 0; r < g.r; ++r)
          for (int64_t s = 0; s < g.s; ++s)
            wt[((c * g.r + r) * g.s + s) * g.k + k] = w.at(k, c, r, s);
    run_blocks(call, "direct-lanes.fwd", plan, [&](int64_t group, int64_t n0, int64_t count) {
      float* in = call.saved ? plan.saved_x(call.saved, n0) : plan.a(call.workspace, group);
      float* out = plan.b(call.workspace, group);
      to_lanes(k, x, n0, count, plan.pad_h, plan.pad_w, g.in_h, g.in_w, in);
      k.correlate(g, in, wt, out);
      from_lanes(k, out, n0, count, y);
    });
    if (call.saved) saved_by_forward_.remember(call.saved, x.data(), nullptr);
  }

  // Without padding dy is scattered into dx (every product useful); with padding, the
  // correlation of dy padded by R - 1 - pad with the flipped filter (its padding's rows
  // skipped, its columns not).
  void backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) override {
    const Plan plan = checked_plan(call, ConvPass::backward_data, dy, w, dx);
    const LaneConvKernelTable& k = kernels();
    float* wt = WorkspaceLayout::at(call.workspace, plan.weights);
    if (plan.scatter) {
      const LaneConvImage& g = plan.forward;
      // w(k, c, r, s) (either layout) as wt[c][r][k][s]
      for (int64_t kk = 0; kk < g.k; ++kk)
        for (int64_t c = 0; c < g.c; ++c)
          for (int64_t r = 0; r < g.r; ++r)
            for (int64_t s = 0; s < g.s; ++s)
              wt[((c * g.r + r) * g.k + kk) * g.s + s] = w.at(kk, c, r, s);
      run_blocks(call, "direct-lanes.bwd_data", plan,
                 [&](int64_t group, int64_t n0, int64_t count) {
                   float* in = plan.a(call.workspace, group);
                   float* out = plan.b(call.workspace, group);
                   to_lanes(k, dy, n0, count, 0, 0, g.out_h, g.out_w, in);
                   std::fill_n(out, g.c * g.in_h * g.in_w * L, 0.0f);
                   k.scatter_data(g, in, wt, out);
                   from_lanes(k, out, n0, count, dx);
                 });
      return;
    }
    const LaneConvImage& g = plan.backward_data;  // c: the layer's K, k: its C
    // w(k, c, r, s) (either layout) flipped as wt[k][R - 1 - r][S - 1 - s][c]
    for (int64_t kk = 0; kk < g.c; ++kk)
      for (int64_t c = 0; c < g.k; ++c)
        for (int64_t r = 0; r < g.r; ++r)
          for (int64_t s = 0; s < g.s; ++s)
            wt[((kk * g.r + g.r - 1 - r) * g.s + g.s - 1 - s) * g.k + c] = w.at(kk, c, r, s);
    run_blocks(call, "direct-lanes.bwd_data", plan, [&](int64_t group, int64_t n0, int64_t count) {
      float* in = plan.a(call.workspace, group);
      float* out = plan.b(call.workspace, group);
      to_lanes(k, dy, n0, count, plan.flip_pad_h, plan.flip_pad_w, g.in_h, g.in_w, in);
      k.correlate(g, in, wt, out);
      from_lanes(k, out, n0, count, dx);
    });
  }

  // Each group sums its blocks into its own partial gradient; the partials are added up
  // in group order.
  void backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                       Tensor& dw) override {
    const Plan plan = checked_plan(call, ConvPass::backward_filter, x, dy, dw);
    const LaneConvKernelTable& k = kernels();
    const LaneConvImage& g = plan.forward;
    const bool reuse_x = saved_by_forward_.holds(call.saved, x.data(), nullptr);
    run_blocks(call, "direct-lanes.bwd_filter", plan,
               [&](int64_t group, int64_t n0, int64_t count) {
                 float* xb = reuse_x ? plan.saved_x(call.saved, n0) : plan.a(call.workspace, group);
                 float* dyb = plan.b(call.workspace, group);
                 float* partial = plan.partial(call.workspace, group);
                 if (n0 == plan.first_block(group) * L)
                   std::fill_n(partial, plan.filter_floats, 0.0f);
                 if (!reuse_x)
                   to_lanes(k, x, n0, count, plan.pad_h, plan.pad_w, g.in_h, g.in_w, xb);
                 to_lanes(k, dy, n0, count, 0, 0, g.out_h, g.out_w, dyb);
                 k.filter_gradient(g, xb, dyb, partial);
               });
    float* sum = plan.partial(call.workspace, 0);
    for (int64_t group = 1; group < plan.groups; ++group) {
      const float* part = plan.partial(call.workspace, group);
      for (int64_t i = 0; i < plan.filter_floats; ++i) sum[i] += part[i];
    }
    for (int64_t k = 0; k < g.k; ++k)  // into dw(k, c, r, s) in either layout
      for (int64_t c = 0; c < g.c; ++c)
        for (int64_t r = 0; r < g.r; ++r)
          for (int64_t s = 0; s < g.s; ++s) dw.at(k, c, r, s) = *sum++;
  }

 private:
  Plan checked_plan(const ConvCall& call, ConvPass pass, const Tensor& a, const Tensor& b,
                    const Tensor& out) const {
    const ConvProblem& p = call.problem;
    check_conv_args(name(), pass, p, a, b, out);
    if (std::string why = unsupported_reason(p); !why.empty())
      fail(ErrorKind::runtime, name(), ": ", p.key(), ": ", why);
    Plan plan(p);
    check_workspace(name(), call, plan.bytes);
    check_saved(name(), call, plan.saved_bytes);
    return plan;
  }

  // block(group, first image, images) for every block of sixteen images, the groups on
  // the pool, each group's blocks in order; one trace record for the pass.
  template <class Block>
  void run_blocks(const ConvCall& call, const char* kernel, const Plan& plan,
                  const Block& block) const {
    const ConvProblem& p = call.problem;
    const ExecContext& ex = call.exec;
    profiler::KernelScope scope(ex.tracer, kernel, ex.device, ex.lane, p.flops(),
                                conv_pass_bytes(p));
    ex.pool.parallel_for(plan.groups, [&](int64_t first, int64_t last) {
      for (int64_t group = first; group < last; ++group)
        for (int64_t b = plan.first_block(group); b < plan.first_block(group + 1); ++b) {
          const int64_t n0 = b * L;
          block(group, n0, std::min(L, p.input.n - n0));
        }
    });
  }

  SavedByForward saved_by_forward_;  // x's blocks in call.saved
};

const ConvAlgorithmRegistration registration("cpu", kName, [](const KnobValues&) {
  return std::make_unique<ConvDirectLanes>();
});

}  // namespace
}  // namespace tunescope::cpu
