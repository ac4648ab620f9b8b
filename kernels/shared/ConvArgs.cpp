// Shared argument checks of the convolution algorithms (see ConvArgs.h).
#include "kernels/shared/ConvArgs.h"

#include <algorithm>
#include <cstdint>
#include <thread>

#include "core/base/Error.h"
#include "kernels/shared/WorkspaceLayout.h"

namespace tunescope {

const char* pass_tag(ConvPass pass) {
  switch (pass) {
    case ConvPass::forward: return "fwd";
    case ConvPass::backward_data: return "bwd_data";
    case ConvPass::backward_filter: return "bwd_filter";
  }
  return "?";
}

std::string invalid_problem_reason(const ConvProblem& problem, GroupedConv grouped) {
  try {
    problem.validate();
  } catch (const Error& error) {
    return error.what();
  }
  if (problem.groups > 1 && grouped == GroupedConv::declined)
    return cat("grouped convolution (", problem.groups,
               " groups) is not implemented by this algorithm; the cpu algorithm direct runs it");
  return {};
}

void check_conv_args(const std::string& algorithm, ConvPass pass, const ConvProblem& problem,
                     const Tensor& in, const Tensor& filter_or_dy, const Tensor& out) {
  problem.validate();
  const Shape4 x = problem.input, y = problem.output(), w = problem.filter();
  struct Expected {
    const char* role;
    const Tensor& tensor;
    Shape4 shape;
  };
  const Expected expected[3] = {
      pass == ConvPass::backward_data ? Expected{"dy", in, y} : Expected{"x", in, x},
      pass == ConvPass::backward_filter ? Expected{"dy", filter_or_dy, y}
                                        : Expected{"w", filter_or_dy, w},
      pass == ConvPass::forward         ? Expected{"y", out, y}
      : pass == ConvPass::backward_data ? Expected{"dx", out, x}
                                        : Expected{"dw", out, w},
  };
  for (const Expected& e : expected) {
    if (!(e.tensor.shape() == e.shape) || e.tensor.layout() != problem.layout || e.tensor.empty())
      fail(ErrorKind::runtime, "conv ", algorithm, ".", pass_tag(pass), " on ", problem.key(), ": ",
           e.role, " is ", e.tensor.shape().str(), " ", to_string(e.tensor.layout()),
           e.tensor.empty() ? " (no storage)" : "", ", expected ", e.shape.str(), " ",
           to_string(problem.layout));
  }
}

void check_workspace(const std::string& algorithm, const ConvCall& call, size_t needed) {
  if (needed == 0) return;
  if (!call.workspace || call.workspace_bytes < needed)
    fail(ErrorKind::runtime, "conv ", algorithm, " on ", call.problem.key(), ": workspace of ",
         call.workspace ? call.workspace_bytes : 0, " bytes, needs ", needed);
  if (reinterpret_cast<std::uintptr_t>(call.workspace) % WorkspaceLayout::kAlign != 0)
    fail(ErrorKind::runtime, "conv ", algorithm, " on ", call.problem.key(),
         ": workspace is not 64-byte aligned");
}

void check_saved(const std::string& algorithm, const ConvCall& call, size_t needed,
                 const std::string& what) {
  if (!call.saved) return;
  if (call.saved_bytes < needed)
    fail(ErrorKind::runtime, "conv ", algorithm, " on ", call.problem.key(), ": ", what, " of ",
         call.saved_bytes, " bytes, needs ", needed);
  if (reinterpret_cast<std::uintptr_t>(call.saved) % WorkspaceLayout::kAlign != 0)
    fail(ErrorKind::runtime, "conv ", algorithm, " on ", call.problem.key(), ": ", what,
         " is not 64-byte aligned");
}

int64_t parallel_slots(const ConvProblem& problem) {
  // Asked once: glibc reads it from /sys on every call (12 us on the loaded 2-core VM), and
  // the passes plan on every call (docs/BENCHMARKS.md, the gaps between LeNet-5's kernels).
  static const int64_t threads = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<int64_t>(problem.input.n, 1, threads);
}

IndexRange valid_outputs(int64_t count, int64_t step, int64_t offset, int64_t extent) {
  // o * step + offset >= 0           <=>  o >= ceil(-offset / step)
  // o * step + offset <= extent - 1  <=>  o <= floor((extent - 1 - offset) / step)
  const int64_t begin = std::min(count, offset >= 0 ? 0 : (-offset + step - 1) / step);
  const int64_t last = extent - 1 - offset;
  const int64_t end = last < 0 ? 0 : last / step + 1;
  return {begin, std::clamp(end, begin, count)};
}

double conv_pass_bytes(const ConvProblem& problem) {
  const double floats = static_cast<double>(problem.input.count() + problem.filter().count() +
                                            problem.output().count());
  return floats * sizeof(float);
}

}  // namespace tunescope
