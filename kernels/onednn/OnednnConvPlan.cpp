#include "kernels/onednn/OnednnConvPlan.h"

#include <algorithm>

#include "core/base/Error.h"
#include "kernels/onednn/OnednnRuntime.h"
#include "kernels/shared/WorkspaceLayout.h"

namespace tunescope::cpu::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

memory::desc activation_desc(const Shape4& s, int64_t mb, Layout layout, bool any) {
  return memory::desc({mb, s.c, s.h, s.w}, kF32,
                      any                      ? Tag::any
                      : layout == Layout::NCHW ? Tag::nchw
                                               : Tag::nhwc);
}

memory::desc filter_desc(const ConvProblem& p, bool any) {
  const Shape4 f = p.filter();
  return memory::desc({f.n, f.c, f.h, f.w}, kF32,
                      any                        ? Tag::any
                      : p.layout == Layout::NCHW ? Tag::oihw
                                                 : Tag::ohwi);
}

struct Geometry {
  memory::dims strides, pad_low, pad_high;
};

// oneDNN wants the padding after the input too: whatever makes the output size come
// out as ours (less than pad_h where a stride leaves the last rows unread).
Geometry geometry(const ConvProblem& p) {
  const Shape4 o = p.output();
  return {{p.stride_h, p.stride_w},
          {p.pad_h, p.pad_w},
          {(o.h - 1) * p.stride_h + p.kernel_h - p.input.h - p.pad_h,
           (o.w - 1) * p.stride_w + p.kernel_w - p.input.w - p.pad_w}};
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// A pass's primitive descriptor and its operands' descriptors in (a, b, out) order.
struct PassDescriptor {
  dnnl::primitive_desc pd;
  memory::desc a, b, out;
  std::string impl() const { return pd.impl_info_str(); }
};

// `blocked`: oneDNN picks the activations' layouts, otherwise they are ours. oneDNN always
// picks the filter's layout (one small reorder per pass) unless `weights` fixes it.
PassDescriptor describe(dnnl::algorithm algorithm, ConvPass pass, const ConvProblem& p, int64_t mb,
                        bool blocked, const memory::desc* weights) {
  const memory::desc x = activation_desc(p.input, mb, p.layout, blocked);
  const memory::desc y = activation_desc(p.output(), mb, p.layout, blocked);
  const memory::desc w = weights ? *weights : filter_desc(p, true);
  const Geometry g = geometry(p);
  const dnnl::primitive_attr attr = user_scratchpad();
  const dnnl::convolution_forward::desc forward(dnnl::prop_kind::forward_training, algorithm, x, w,
                                                y, g.strides, g.pad_low, g.pad_high);
  const dnnl::convolution_forward::primitive_desc forward_pd(forward, attr, cpu_engine());
  switch (pass) {
    case ConvPass::forward:
      return {forward_pd, forward_pd.src_desc(), forward_pd.weights_desc(), forward_pd.dst_desc()};
    case ConvPass::backward_data: {
      const dnnl::convolution_backward_data::desc d(algorithm, x, w, y, g.strides, g.pad_low,
                                                    g.pad_high);
      const dnnl::convolution_backward_data::primitive_desc pd(d, attr, cpu_engine(), forward_pd);
      return {pd, pd.diff_dst_desc(), pd.weights_desc(), pd.diff_src_desc()};
    }
    case ConvPass::backward_filter: {
      const dnnl::convolution_backward_weights::desc d(algorithm, x, w, y, g.strides, g.pad_low,
                                                       g.pad_high);
      const dnnl::convolution_backward_weights::primitive_desc pd(d, attr, cpu_engine(),
                                                                  forward_pd);
      return {pd, pd.src_desc(), pd.diff_dst_desc(), pd.diff_weights_desc()};
    }
  }
  fail(ErrorKind::runtime, "onednn: unknown pass");
}

// Whether the activations go through oneDNN's blocked layouts (with a reorder each way)
// rather than ours. Ours, unless oneDNN has only a fallback for them -- the reference
// kernel or im2col + sgemm, as for NCHW -- and a different kernel on its own layouts
// (a direct JIT kernel on nChw16c). NHWC usually gets the same JIT kernels as the
// blocked layouts, or brgconv.
bool blocked_activations(dnnl::algorithm algorithm, ConvPass pass, const ConvProblem& p,
                         int64_t mb) {
  std::string ours;
  try {
    ours = describe(algorithm, pass, p, mb, false, nullptr).impl();
  } catch (const dnnl::error&) {
    return true;  // e.g. Winograd, which runs on blocked layouts only
  }
  const bool fallback =
      ours.find("ref") != std::string::npos || ours.find("gemm") != std::string::npos;
  return fallback && describe(algorithm, pass, p, mb, true, nullptr).impl() != ours;
}

const int kArgs[3][3] = {
    {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
    {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC},
    {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS},
};
const char* const kRoles[3][3] = {
    {"src", "weights", "dst"},
    {"diff_dst", "weights", "diff_src"},
    {"src", "diff_dst", "diff_weights"},
};

size_t reorder_scratch_bytes(Operand& op, bool input) {
  if (!op.needs_reorder()) return 0;
  const memory::desc& from = input ? op.user : op.inner;
  const memory::desc& to = input ? op.inner : op.user;
  const dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to, user_scratchpad());
  op.convert = dnnl::reorder(pd);
  op.convert_scratch = pd.scratchpad_desc();
  return op.convert_scratch.get_size();
}

SizedPrimitive make_sized(dnnl::algorithm algorithm, ConvPass pass, const ConvProblem& p,
                          int64_t mb, bool blocked, const memory::desc* weights) {
  const PassDescriptor d = describe(algorithm, pass, p, mb, blocked, weights);
  const memory::desc x = activation_desc(p.input, mb, p.layout, false);
  const memory::desc y = activation_desc(p.output(), mb, p.layout, false);
  const memory::desc w = filter_desc(p, false);
  const memory::desc users[3][3] = {{x, w, y}, {y, w, x}, {x, y, w}};
  const int index = static_cast<int>(pass);
  SizedPrimitive s;
  s.mb = mb;
  s.compute = dnnl::primitive(d.pd);
  s.impl = d.impl();
  s.scratch = d.pd.scratchpad_desc();
  s.scratch_bytes = s.scratch.get_size();
  Operand* ops[3] = {&s.a, &s.b, &s.out};
  const memory::desc* inner[3] = {&d.a, &d.b, &d.out};
  for (int i = 0; i < 3; ++i) {
    ops[i]->arg = kArgs[index][i];
    ops[i]->role = kRoles[index][i];
    ops[i]->user = users[index][i];
    ops[i]->inner = *inner[i];
    s.scratch_bytes = std::max(s.scratch_bytes, reorder_scratch_bytes(*ops[i], i < 2));
  }
  return s;
}

}  // namespace

const SizedPrimitive& PassPlan::for_mb(int64_t mb) const {
  for (const SizedPrimitive& s : sizes)
    if (s.mb == mb) return s;
  fail(ErrorKind::runtime, kernel_prefix, " has no primitive for a sub-batch of ", mb);
}

PassPlan make_pass_plan(const std::string& name, dnnl::algorithm algorithm, ConvPass pass,
                        const ConvProblem& problem) {
  PassPlan plan;
  plan.pass = pass;
  const int64_t n = problem.input.n;
  plan.slots = parallel_slots(problem);
  const int64_t large = ceil_div(n, plan.slots), small = n / plan.slots;
  plan.blocked = blocked_activations(algorithm, pass, problem, large);
  plan.sizes.push_back(make_sized(algorithm, pass, problem, large, plan.blocked, nullptr));
  // The smaller parts share the filter (or its gradient's partial sums) in the larger's layout.
  const bool weights_is_b = pass != ConvPass::backward_filter;
  if (small != large) {
    const memory::desc weights = weights_is_b ? plan.sizes[0].b.inner : plan.sizes[0].out.inner;
    plan.sizes.push_back(make_sized(algorithm, pass, problem, small, plan.blocked, &weights));
  }

  // Workspace: [weights in the primitive's layout] then per slot [scratchpad | a | b | out].
  const auto floats = [](size_t bytes) { return static_cast<int64_t>((bytes + 3) / 4); };
  const auto largest = [&](auto member) {
    size_t most = 0;
    for (const SizedPrimitive& s : plan.sizes) most = std::max(most, member(s));
    return most;
  };
  const SizedPrimitive& first = plan.sizes[0];
  WorkspaceLayout shared;
  if (weights_is_b && first.b.needs_reorder()) shared.add_floats(floats(first.b.inner.get_size()));
  plan.shared_bytes = shared.total_bytes();
  WorkspaceLayout slot;
  plan.scratch_offset =
      slot.add_floats(floats(largest([](const SizedPrimitive& s) { return s.scratch_bytes; })));
  const size_t a_offset = slot.add_floats(
      plan.any_reorder(&SizedPrimitive::a)
          ? floats(largest([](const SizedPrimitive& s) { return s.a.inner.get_size(); }))
          : 0);
  const bool b_per_slot = !weights_is_b && plan.any_reorder(&SizedPrimitive::b);
  const size_t b_offset = slot.add_floats(
      b_per_slot ? floats(largest([](const SizedPrimitive& s) { return s.b.inner.get_size(); }))
                 : 0);
  // Backward filter: every slot but a lone one without reorder sums into its own partial.
  const bool out_per_slot =
      plan.any_reorder(&SizedPrimitive::out) || (!weights_is_b && plan.slots > 1);
  const size_t out_offset = slot.add_floats(
      out_per_slot ? floats(largest([](const SizedPrimitive& s) { return s.out.inner.get_size(); }))
                   : 0);
  plan.slot_bytes = slot.total_bytes();
  plan.total_bytes = plan.shared_bytes + static_cast<size_t>(plan.slots) * plan.slot_bytes;
  for (SizedPrimitive& s : plan.sizes) {
    s.a.offset = a_offset;
    s.b.offset = weights_is_b ? 0 : b_offset;
    s.out.offset = out_offset;
  }

  plan.kernel_prefix = cat(name, ".", pass_tag(pass), ".");
  std::string impl = first.impl;
  if (plan.sizes.size() > 1 && plan.sizes[1].impl != impl) impl += "+" + plan.sizes[1].impl;
  std::replace(impl.begin(), impl.end(), '.', '_');  // '.' separates the name's parts
  plan.compute_kernel = plan.kernel_prefix + impl;
  return plan;
}

}  // namespace tunescope::cpu::onednn
