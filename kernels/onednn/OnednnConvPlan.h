// How one pass of a oneDNN convolution runs on one problem: the primitives (one per
// sub-batch size), the layouts they read and write, the reorders between those and
// ours, and where each buffer lies in our workspace.
//
// The batch is cut into parallel_slots(problem) parts of nearly equal size (so at most
// two sizes, hence two primitives); each part runs single-threaded on a thread of our
// pool with its own scratchpad and reorder buffers (slot), so the workspace depends on
// the problem and machine only. Backward filter sums the parts' partial filters.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/ConvProblem.h"
#include "kernels/shared/ConvArgs.h"

namespace tunescope::cpu::onednn {

// One tensor argument of a primitive: our plain layout, the one the primitive uses
// (a blocked one oneDNN chose through format_tag::any, or ours), and the reorder
// between them when they differ.
struct Operand {
  int arg = 0;            // DNNL_ARG_*
  const char* role = "";  // "src", "weights", "diff_dst"...: the reorder kernel's suffix
  dnnl::memory::desc user;
  dnnl::memory::desc inner;
  dnnl::reorder convert;  // user -> inner for inputs, inner -> user for outputs
  dnnl::memory::desc convert_scratch;
  size_t offset = 0;  // of the inner buffer, in its slot (or in the shared part)
  bool needs_reorder() const { return user != inner; }
};

// The primitive for one sub-batch size.
struct SizedPrimitive {
  int64_t mb = 0;
  dnnl::primitive compute;
  std::string
      impl;  // impl_info_str(): "jit:avx512_core", "gemm:jit", "jit_wino_4x3:avx512_core"...
  Operand a, b, out;  // see PassPlan
  dnnl::memory::desc scratch;
  size_t scratch_bytes = 0;  // the most of its own and its reorders' scratchpads
};

// Operands per pass: forward (a x, b w, out y); backward data (a dy, b w, out dx);
// backward filter (a x, b dy, out dw).
struct PassPlan {
  ConvPass pass = ConvPass::forward;
  std::vector<SizedPrimitive> sizes;  // the larger sub-batch first
  int64_t slots = 1;
  bool blocked = false;       // activations in layouts oneDNN chose (format_tag::any)
  size_t shared_bytes = 0;    // the weights in the primitive's layout (fwd, bwd_data)
  size_t slot_bytes = 0;      // scratchpad + inner buffers of one slot
  size_t scratch_offset = 0;  // in each slot
  size_t total_bytes = 0;
  std::string compute_kernel;  // "<algorithm>.<pass>.<impl>"
  std::string kernel_prefix;   // "<algorithm>.<pass>."

  const SizedPrimitive& for_mb(int64_t mb) const;
  // Whether the operand needs a reorder in any part (the filter's layout is the same in
  // all, an activation's may differ between the two sizes).
  bool any_reorder(Operand SizedPrimitive::*operand) const {
    for (const SizedPrimitive& s : sizes)
      if ((s.*operand).needs_reorder()) return true;
    return false;
  }
  // Slot s covers images [first(s), first(s + 1)).
  int64_t first(int64_t slot, int64_t batch) const { return slot * batch / slots; }
};

// Builds the plan, throwing dnnl::error when oneDNN has no implementation of `algorithm`
// for this pass and problem. The caller holds a SingleThreadedScope.
PassPlan make_pass_plan(const std::string& name, dnnl::algorithm algorithm, ConvPass pass,
                        const ConvProblem& problem);

}  // namespace tunescope::cpu::onednn
