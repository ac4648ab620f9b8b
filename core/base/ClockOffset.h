// The offset of this rank's trace clock to rank 0's, for aligning the ranks' traces:
// rank 0's time = this rank's time + offset_ns. Measured by ping-pong with rank 0: this
// rank notes t1, rank 0 answers with its time t0, this rank notes t2; of `rounds` such
// samples the one with the smallest round trip (t2 - t1) wins, with offset
// t0 - (t1 + t2) / 2. Rank 0's answer came at some point inside the round trip, so the
// offset is known to within half of it: uncertainty_ns = (t2 - t1) / 2.
#pragma once

#include <cstdint>
#include <functional>

#include "core/base/Ranks.h"

namespace tunescope {

struct ClockOffset {
  int64_t offset_ns = 0;       // 0 on rank 0
  int64_t uncertainty_ns = 0;  // 0 on rank 0
};

// Collective: every rank calls it. `now` is the clock being aligned (profiler::now_ns).
ClockOffset measure_clock_offset(Communicator& communicator, int rounds,
                                 const std::function<int64_t()>& now);

}  // namespace tunescope
