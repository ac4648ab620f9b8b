// The data movement of a split batch on one host: scatter a shard of the batch into a
// replica's input, all-reduce the replicas' gradients, broadcast the updated weights.
// Replicas share the host's memory, so each is one traced parallel loop over floats
// ("scatter", "allreduce", "broadcast") on the calling lane; the CUDA backend will put
// NCCL behind the same calls.
#pragma once

#include <cstdint>
#include <span>

#include "core/base/ExecContext.h"
#include "core/base/Tensor.h"

namespace tunescope {

// shard = rows [first, first + shard.n) of batch (same c, h, w and layout). The batch
// is the outermost dimension in both layouts, so the rows are one contiguous block.
void scatter_rows(const ExecContext& ctx, const Tensor& batch, int64_t first, Tensor& shard);
// out = scale * sum of sources, elementwise; out may be one of the sources.
// All tensors have out's shape and layout.
void allreduce_sum(const ExecContext& ctx, std::span<const Tensor* const> sources, float scale, Tensor& out);
// Copies `source` into every tensor of `targets`.
void broadcast(const ExecContext& ctx, const Tensor& source, std::span<Tensor* const> targets);

}  // namespace tunescope
