// How the per-channel kernels (ElementwiseKernelTable.h) walk a tensor: as ChannelRuns,
// channel planes in NCHW and blocks of pixel rows in NHWC, in parallel on the pool, and
// as per-channel sums over chunks fixed by the shape (CpuOpsSupport.h's Chunks), combined
// in chunk order, so the sums are the same for any pool. Private to kernels/cpu.
#pragma once

#include <array>
#include <vector>

#include "kernels/cpu/CpuOpsSupport.h"
#include "kernels/cpu/ElementwiseKernelTable.h"

namespace tunescope::cpu::ops {

// Calls f(offset, run, channel0) over the whole tensor; calls may run concurrently.
template <typename F>
void for_each_channel_run(ThreadPool& pool, const Shape4& s, Layout layout, const F& f) {
  const int64_t channels = s.c, plane = s.h * s.w;
  if (layout == Layout::NCHW) {
    pool.parallel_for(
        s.n * channels,
        [&](int64_t first, int64_t last) {
          for (int64_t p = first; p < last; ++p)
            f(p * plane, ChannelRun{1, plane, true}, p % channels);
        },
        grain_for(plane));
  } else {
    pool.parallel_for(
        s.n * plane,
        [&](int64_t first, int64_t last) {
          f(first * channels, ChannelRun{last - first, channels, false}, int64_t{0});
        },
        grain_for(channels));
  }
}

// K per-channel sums: f(offset, run, channel0, out) adds run's terms into out[k][0..]
// (out[k] already points at channel0's entry).
template <size_t K, typename F>
std::array<std::vector<double>, K> sum_channel_runs(ThreadPool& pool, const Shape4& s,
                                                    Layout layout, const F& f) {
  const int64_t channels = s.c, plane = s.h * s.w;
  const bool planar = layout == Layout::NCHW;
  const int64_t segments = planar ? s.n * channels : s.n * plane;
  const int64_t segment_length = planar ? plane : channels;
  const Chunks chunks =
      fixed_chunks(segments, ceil_div(kReductionChunk, std::max<int64_t>(1, segment_length)));
  std::vector<double> partial(chunks.number * K * channels, 0.0);
  pool.parallel_for(
      chunks.number,
      [&](int64_t first, int64_t last) {
        for (int64_t chunk = first; chunk < last; ++chunk) {
          double* acc = &partial[chunk * K * channels];
          std::array<double*, K> out;
          if (planar) {
            for (int64_t p = chunks.begin(chunk); p < chunks.end(chunk); ++p) {
              const int64_t c = p % channels;
              for (size_t k = 0; k < K; ++k) out[k] = acc + k * channels + c;
              f(p * plane, ChannelRun{1, plane, true}, c, out.data());
            }
          } else {
            for (size_t k = 0; k < K; ++k) out[k] = acc + k * channels;
            const int64_t rows = chunks.end(chunk) - chunks.begin(chunk);
            f(chunks.begin(chunk) * channels, ChannelRun{rows, channels, false}, int64_t{0},
              out.data());
          }
        }
      },
      grain_for(chunks.size * segment_length));
  std::array<std::vector<double>, K> sums;
  for (size_t k = 0; k < K; ++k) {
    sums[k].assign(channels, 0.0);
    for (int64_t chunk = 0; chunk < chunks.number; ++chunk) {
      const double* acc = &partial[(chunk * K + k) * channels];
      for (int64_t c = 0; c < channels; ++c) sums[k][c] += acc[c];
    }
  }
  return sums;
}

}  // namespace tunescope::cpu::ops
