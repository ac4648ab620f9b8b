// Shared building blocks of the CPU op kernels: shape-fixed work partitions, a fixed-order
// sum of a run, per-channel elementwise loops for both layouts, and sgemm split over the
// pool. Per-channel sums are ChannelRuns.h's. Private to kernels/cpu.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/base/OpChecks.h"
#include "core/base/Tensor.h"
#include "core/base/ThreadPool.h"

namespace tunescope::cpu::ops {

// Elements one chunk of a parallel loop should at least cover: below this, waking the
// pool's workers costs more than the work they would take over.
inline constexpr int64_t kElementGrain = 16384;
// Elements per partial sum of a reduction. Smaller than kElementGrain so that a
// reduction still has some chunks to spread once the whole tensor is worth it.
inline constexpr int64_t kReductionChunk = 4096;

// The argument checks every backend shares (core/base/OpChecks.h).
using namespace ::tunescope::op_checks;

// [0, count) cut into chunks whose size depends on count alone, never on the pool
// size, so partial results and the order they are combined in are reproducible.
struct Chunks {
  int64_t count = 0;
  int64_t size = 1;
  int64_t number = 0;
  int64_t begin(int64_t i) const { return i * size; }
  int64_t end(int64_t i) const { return std::min(count, (i + 1) * size); }
};
Chunks fixed_chunks(int64_t count, int64_t min_size, int64_t max_chunks = 64);

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The parallel_for grain for items of `item_elements` elements each: enough items per
// chunk to cover kElementGrain elements.
inline int64_t grain_for(int64_t item_elements) {
  return std::max<int64_t>(1, kElementGrain / std::max<int64_t>(1, item_elements));
}

// Sums K quantities term(i) -> std::array<float, K> over i in [begin, end). Eight
// independent double lanes keep the loop free of a serial dependency chain while the
// order stays fixed.
template <size_t K, typename Term>
std::array<double, K> sum_run(int64_t begin, int64_t end, const Term& term) {
  constexpr int64_t kLanes = 8;
  double lanes[K][kLanes] = {};
  int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) {
      const auto v = term(i + j);
      for (size_t k = 0; k < K; ++k) lanes[k][j] += v[k];
    }
  std::array<double, K> out{};
  for (size_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < kLanes; ++j) out[k] += lanes[k][j];
  for (; i < end; ++i) {
    const auto v = term(i);
    for (size_t k = 0; k < K; ++k) out[k] += v[k];
  }
  return out;
}

// out[c] = sum over (n, h, w) of t: the bias gradient, shared by bias.bwd and fc.bwd_weight;
// on the vector kernels (ElementwiseIsa.h) through ChannelRuns.h's sum_channel_runs.
void channel_sums(ThreadPool& pool, const Tensor& t, float* out);

// Calls f(i, c) for every physical offset i of a tensor of shape s and `layout`, with
// c its channel: channel planes in NCHW, rows of contiguous channels in NHWC. f must
// only touch offset i of its tensors, so chunks run in parallel.
template <typename F>
void for_each_with_channel(ThreadPool& pool, const Shape4& s, Layout layout, const F& f) {
  const int64_t channels = s.c, plane = s.h * s.w;
  if (layout == Layout::NCHW) {
    pool.parallel_for(
        s.n * channels,
        [&](int64_t first, int64_t last) {
          for (int64_t p = first; p < last; ++p) {
            const int64_t c = p % channels, base = p * plane;
            for (int64_t i = base; i < base + plane; ++i) f(i, c);
          }
        },
        grain_for(plane));
  } else {
    pool.parallel_for(
        s.n * plane,
        [&](int64_t first, int64_t last) {
          for (int64_t row = first; row < last; ++row) {
            const int64_t base = row * channels;
            for (int64_t c = 0; c < channels; ++c) f(base + c, c);
          }
        },
        grain_for(channels));
  }
}

// C = op(A) * op(B) + beta * C in row-major storage (BLAS argument meanings). OpenBLAS
// runs single-threaded, so the product is cut into row or column panels of C, fixed by
// the shape, one sgemm call each.
struct Gemm {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float beta = 0.0f;
  float* c = nullptr;
  int64_t ldc = 0;
};
void parallel_sgemm(ThreadPool& pool, const Gemm& g);

}  // namespace tunescope::cpu::ops
