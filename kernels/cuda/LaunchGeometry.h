// How the CUDA op kernels cut their work into blocks, as plain host functions so the
// rules are unit-tested without a device. C++17 and free of CUDA types: the .cu files
// include it too.
//  - Elementwise kernels use grid-stride loops: a grid capped at kMaxBlocks covers any
//    element count, so no count overflows the grid's dimension limits.
//  - Per-channel reductions (batch norm, bias gradient) split the units of a channel
//    (images in NCHW, pixel rows in NHWC) into a number of splits fixed by the shape
//    alone; each split leaves one partial sum per channel and the partials are added in
//    split order, so the result is the same on every run.
#pragma once

#include <cstdint>

namespace tunescope::cuda {

inline constexpr int kBlockThreads = 256;
inline constexpr int64_t kMaxBlocks = 8192;
// Elements one reduction split should at least cover, and the most splits of a channel.
inline constexpr int64_t kSplitElements = 8192;
inline constexpr int64_t kMaxSplits = 64;

struct Grid1d {
  unsigned blocks = 1;
  unsigned threads = kBlockThreads;
};

// Enough blocks of kBlockThreads for one thread per item, at most kMaxBlocks (the
// kernels' grid-stride loops take the rest); at least one block, also for 0 items.
Grid1d grid_for(int64_t items);

struct ChannelSplit {
  int64_t splits = 1;     // >= 1; no split is empty
  int64_t per_split = 0;  // units per split; the last split takes the remainder
};

// `units` units of `unit_elements` elements per channel each (NCHW: N images of an
// H*W plane; NHWC: N*H*W rows of one element per channel).
ChannelSplit channel_split(int64_t units, int64_t unit_elements);

}  // namespace tunescope::cuda
