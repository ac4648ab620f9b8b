// Argument checks and small shared pieces of every convolution algorithm, on every
// backend: tensor shapes against the problem, workspace size, one name per pass, and the
// parallel slot count that sizes per-thread scratch in the workspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/ConvAlgorithm.h"

namespace tunescope {

enum class ConvPass { forward, backward_data, backward_filter };

// "fwd", "bwd_data", "bwd_filter": the middle part of every kernel name.
const char* pass_tag(ConvPass pass);

// Whether an algorithm runs grouped (and depthwise) convolutions, problem.groups > 1.
enum class GroupedConv { declined, supported };

// The reason a malformed problem cannot run (empty when problem.validate() passes), so
// unsupported_reason() never throws; a grouped problem is declined unless the algorithm
// says it runs them, so every algorithm that calls this declines groups by default.
std::string invalid_problem_reason(const ConvProblem& problem,
                                   GroupedConv grouped = GroupedConv::declined);

// Throws Error(runtime) naming the algorithm, pass, problem key and tensor when a tensor
// has the wrong shape or layout, has no storage, or the problem is invalid.
// `in` is x (forward, backward_filter) or dy (backward_data); `out` is what the pass writes.
void check_conv_args(const std::string& algorithm, ConvPass pass, const ConvProblem& problem,
                     const Tensor& in, const Tensor& filter_or_dy, const Tensor& out);

// Throws Error(runtime) when call's workspace is smaller than `needed` or misaligned.
void check_workspace(const std::string& algorithm, const ConvCall& call, size_t needed);
// The same for call.saved when one is given (`what` names it in the message).
void check_saved(const std::string& algorithm, const ConvCall& call, size_t needed,
                 const std::string& what = "saved buffer");

// How many images the algorithms process at once, each with its own scratch in the
// workspace: one per hardware thread, never more than the batch. It depends on the
// problem and machine only, so workspace_bytes() needs no thread pool.
int64_t parallel_slots(const ConvProblem& problem);

// Output indices o in [0, count) whose input index o * step + offset lies in
// [0, extent), as the half-open range [begin, end) (empty when begin >= end).
struct IndexRange {
  int64_t begin, end;
};
IndexRange valid_outputs(int64_t count, int64_t step, int64_t offset, int64_t extent);

inline int64_t round_up(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Byte and element counts of one pass for KernelScope: in + filter + out, float32.
double conv_pass_bytes(const ConvProblem& problem);

}  // namespace tunescope
