// The gradient all-reduce across ranks (processes) of the cuda backend: NCCL, with the
// communicator bootstrapped over the ranks' Communicator (rank 0 makes the unique id and
// broadcasts it; every rank then joins with ncclCommInitRank on its device). The sums run
// on the calling lane's stream, in one NCCL group per bucket.
#pragma once

#include <memory>

#include "core/base/Ranks.h"

namespace tunescope::cuda {

// Collective. Throws Error(usage) naming why when no CUDA device is visible, and
// Error(unsupported) in a build without NCCL.
std::unique_ptr<RankReducer> make_nccl_rank_reducer(Communicator& communicator, int device);

}  // namespace tunescope::cuda
