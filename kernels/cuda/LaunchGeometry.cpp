#include "kernels/cuda/LaunchGeometry.h"

#include <algorithm>

namespace tunescope::cuda {

Grid1d grid_for(int64_t items) {
  const int64_t blocks = (std::max<int64_t>(items, 1) + kBlockThreads - 1) / kBlockThreads;
  return {static_cast<unsigned>(std::min(blocks, kMaxBlocks)), kBlockThreads};
}

ChannelSplit channel_split(int64_t units, int64_t unit_elements) {
  units = std::max<int64_t>(units, 1);
  const int64_t elements = units * std::max<int64_t>(unit_elements, 1);
  const int64_t wanted = std::clamp<int64_t>((elements + kSplitElements - 1) / kSplitElements, 1,
                                             std::min(kMaxSplits, units));
  ChannelSplit split;
  split.per_split = (units + wanted - 1) / wanted;
  split.splits = (units + split.per_split - 1) / split.per_split;  // drops splits left empty
  return split;
}

}  // namespace tunescope::cuda
