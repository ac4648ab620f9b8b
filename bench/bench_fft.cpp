// Own batched 2-D r2c FFT (OwnFft2d) against FFTW's plan_many (FFTW_MEASURE, planned
// before timing) for n x n planes, n = 8..128 (powers of two and 10, 12, 20 at batch
// 256..16384, other 2^a 3^b 5^c sizes at batch 1024 and 4096), forward r2c and, for
// the sizes up to 20x20 and powers of two, inverse c2r (fft/c2r-own, fft/c2r-fftw).
//
// Fairness: both run on the same ThreadPool with the same split — the batch is cut into
// one contiguous chunk per thread (a multiple of 8 planes) and each thread executes on
// its chunk; FFTW runs one plan_many per chunk size via fftwf_execute_dft_r2c (new-array
// execution, thread-safe), not fftwf_threads.
// GFLOP/s counts 2.5 N log2 N flops per real transform of N = n * n points (the usual
// 5 N log2 N complex-FFT convention, halved for real input).
// Batches whose planes and spectra exceed kMaxBytes are skipped.
// c2r reads Hermitian spectra (the forward transform of the noise) and writes the planes;
// FFTW's multi-dimensional c2r overwrites its input (it cannot preserve it), so later
// iterations read its leftovers, as in fft-fftw's convolution; ours leaves it intact.
// Threads: --threads=N or TUNESCOPE_BENCH_THREADS=N (default: hardware concurrency).
// Names are fft/<impl>/<n>/<batch>; the ratio own/FFTW is time(own) / time(fftw).
// fft/own runs the instruction-set path OwnFft2d picks (TUNESCOPE_FFT_ISA, else the
// widest the CPU has); fft/own-<isa> rows force each path this CPU runs. fft/own and
// fft/c2r-own write their output as OwnFft2d::store_for chooses for the batch; the
// -cached and -streamed rows (batch >= 4096, n <= 32) force each way (OwnFftStore).
// Strided (NHWC) planes: fft/nhwc-own and fft/nhwc-fftw /<n>/<C>/<images> transform the
// C interleaved planes of each image of an NHWC batch (element stride C, planes 1
// apart) in place, one call (one plan_many execution) per image, images split over
// the pool; fft/nchw-own is the same planes stored NCHW (element stride 1).
// Small batches: fft/split-batch and fft/split-within /<n>/<count> run OwnFft2d's two
// splits over the pool (OwnFftSplit); fft/split-fftw is one plan_many of all planes on
// the calling thread (a batch this small gives FFTW's batch split nothing to share).
#include <benchmark/benchmark.h>
#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "bench/BenchMain.h"
#include "core/base/AlignedBuffer.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/OwnFft.h"
#include "kernels/cpu/OwnFftIsa.h"

namespace tunescope {
namespace {

using cfloat = std::complex<float>;

constexpr int64_t kMaxBytes = int64_t{640} << 20;
int g_threads = 1;

ThreadPool& pool() {
  static ThreadPool shared(g_threads);
  return shared;
}

// Planes of n x n reals and their spectra, contiguous, filled with noise.
struct Batch {
  int64_t n, count, real_stride, complex_stride;
  AlignedBuffer real, spectrum;
  Batch(int64_t n_, int64_t count_)
      : n(n_),
        count(count_),
        real_stride(n_ * n_),
        complex_stride(n_ * (n_ / 2 + 1)),
        real(static_cast<size_t>(count_ * real_stride) * sizeof(float)),
        spectrum(static_cast<size_t>(count_ * complex_stride) * sizeof(cfloat)) {}
  float* x() { return static_cast<float*>(real.data()); }
  cfloat* X() { return static_cast<cfloat*>(spectrum.data()); }
  // Noise planes and their spectra.
  void fill() {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::generate_n(x(), count * real_stride, [&] { return dist(rng); });
    cpu::OwnFft2d(n, n).forward(x(), {real_stride, 1}, X(), complex_stride, count);
  }
};

// [begin, end) of thread t's chunk: count split over the pool in multiples of 8 planes.
std::pair<int64_t, int64_t> chunk_of(int64_t count, int threads, int64_t t) {
  const int64_t groups = (count + 7) / 8, per = (groups + threads - 1) / threads;
  return {std::min(count, t * per * 8), std::min(count, (t + 1) * per * 8)};
}

void set_counters(benchmark::State& state, int64_t n, int64_t count) {
  const double points = static_cast<double>(n * n);
  const double flops = 2.5 * points * std::log2(points) * static_cast<double>(count);
  state.counters["FLOP/s"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["planes/s"] =
      benchmark::Counter(static_cast<double>(count), benchmark::Counter::kIsIterationInvariantRate);
}

enum class Direction { r2c, c2r };

// `isa`: the instruction-set path to force; none: the one OwnFft2d picks. `store`:
// how the output is written, automatic as OwnFft2d chooses for the whole batch (as its
// pooled calls do), not for each thread's chunk.
void bm_own(benchmark::State& state, std::optional<cpu::OwnFftIsa> isa, Direction direction,
            cpu::OwnFftStore store) {
  const int64_t n = state.range(0), count = state.range(1);
  Batch b(n, count);
  b.fill();
  const cpu::OwnFft2d fft = isa ? cpu::OwnFft2d(n, n, *isa) : cpu::OwnFft2d(n, n);
  if (store == cpu::OwnFftStore::automatic) store = fft.store_for(count);
  ThreadPool& p = pool();
  // The same chunks as FFTW below, one per thread.
  auto run = [&] {
    p.parallel_for(p.size(), [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const auto [first, last] = chunk_of(count, p.size(), t);
        float* x = b.x() + first * b.real_stride;
        cfloat* X = b.X() + first * b.complex_stride;
        if (direction == Direction::r2c)
          fft.forward(x, {b.real_stride, 1}, X, b.complex_stride, last - first, store);
        else
          fft.inverse(X, b.complex_stride, x, {b.real_stride, 1}, last - first, store);
      }
    });
  };
  run();  // warm the twiddle tables and per-thread scratch
  for (auto _ : state) {
    run();
    benchmark::ClobberMemory();
  }
  set_counters(state, n, count);
}

// One FFTW_MEASURE plan per (n, planes), kept for the whole run: FFTW's wisdom would make
// re-planning cheap, but keeping them also keeps planning out of every repetition.
fftwf_plan fftw_plan_for(int64_t n, int64_t planes, Direction direction = Direction::r2c) {
  static std::map<std::tuple<int64_t, int64_t, Direction>, fftwf_plan> plans;
  auto& plan = plans[{n, planes, direction}];
  if (!plan) {
    Batch scratch(n, planes);  // MEASURE overwrites its arrays, so plan on scratch ones
    const int dims[2] = {static_cast<int>(n), static_cast<int>(n)};
    const int howmany = static_cast<int>(planes), rdist = static_cast<int>(scratch.real_stride),
              cdist = static_cast<int>(scratch.complex_stride);
    auto* X = reinterpret_cast<fftwf_complex*>(scratch.X());
    plan = direction == Direction::r2c
               ? fftwf_plan_many_dft_r2c(2, dims, howmany, scratch.x(), nullptr, 1, rdist, X,
                                         nullptr, 1, cdist, FFTW_MEASURE)
               : fftwf_plan_many_dft_c2r(2, dims, howmany, X, nullptr, 1, cdist, scratch.x(),
                                         nullptr, 1, rdist, FFTW_MEASURE);
  }
  return plan;
}

void bm_fftw(benchmark::State& state, Direction direction) {
  const int64_t n = state.range(0), count = state.range(1);
  ThreadPool& p = pool();
  std::vector<fftwf_plan> plans(static_cast<size_t>(p.size()), nullptr);
  for (int64_t t = 0; t < p.size(); ++t) {
    const auto [first, last] = chunk_of(count, p.size(), t);
    if (last > first) plans[static_cast<size_t>(t)] = fftw_plan_for(n, last - first, direction);
  }
  Batch b(n, count);
  b.fill();
  auto run = [&] {
    p.parallel_for(p.size(), [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const auto [first, last] = chunk_of(count, p.size(), t);
        if (last == first) continue;
        float* x = b.x() + first * b.real_stride;
        auto* X = reinterpret_cast<fftwf_complex*>(b.X() + first * b.complex_stride);
        if (direction == Direction::r2c)
          fftwf_execute_dft_r2c(plans[static_cast<size_t>(t)], x, X);
        else
          fftwf_execute_dft_c2r(plans[static_cast<size_t>(t)], X, x);
      }
    });
  };
  run();
  for (auto _ : state) {
    run();
    benchmark::ClobberMemory();
  }
  set_counters(state, n, count);
}

// NHWC batch of `images` images of n x n x C, or the same planes NCHW.
void bm_layout(benchmark::State& state, bool own, bool nhwc) {
  const int64_t n = state.range(0), C = state.range(1), images = state.range(2);
  const int64_t plane = n * n, image = plane * C, cs = n * (n / 2 + 1);
  Batch b(n, images * C);  // reals and spectra of images * C planes, as above
  b.fill();
  // Element stride and plane distance of one image's C planes.
  const int64_t element = nhwc ? C : 1, distance = nhwc ? 1 : plane;
  const cpu::OwnFft2d fft(n, n);
  fftwf_plan plan = nullptr;
  if (!own) {
    Batch scratch(n, C);  // FFTW_MEASURE overwrites its arrays
    const int dims[2] = {static_cast<int>(n), static_cast<int>(n)};
    plan = fftwf_plan_many_dft_r2c(2, dims, static_cast<int>(C), scratch.x(), nullptr,
                                   static_cast<int>(element), static_cast<int>(distance),
                                   reinterpret_cast<fftwf_complex*>(scratch.X()), nullptr, 1,
                                   static_cast<int>(cs), FFTW_MEASURE);
  }
  auto run = [&] {
    pool().parallel_for(images, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        float* x = b.x() + i * image;
        cfloat* X = b.X() + i * C * cs;
        if (own)
          fft.forward(x, {distance, element}, X, cs, C);
        else
          fftwf_execute_dft_r2c(plan, x, reinterpret_cast<fftwf_complex*>(X));
      }
    });
  };
  run();
  for (auto _ : state) {
    run();
    benchmark::ClobberMemory();
  }
  if (plan) fftwf_destroy_plan(plan);
  set_counters(state, n, images * C);
}

// A batch smaller than the pool's threads times eight planes.
void bm_split(benchmark::State& state, std::optional<cpu::OwnFftSplit> split) {
  const int64_t n = state.range(0), count = state.range(1);
  Batch b(n, count);
  b.fill();
  const cpu::OwnFft2d fft(n, n);
  fftwf_plan plan = split ? nullptr : fftw_plan_for(n, count);
  auto run = [&] {
    if (split)
      fft.forward(pool(), b.x(), {b.real_stride, 1}, b.X(), b.complex_stride, count, *split);
    else
      fftwf_execute_dft_r2c(plan, b.x(), reinterpret_cast<fftwf_complex*>(b.X()));
  };
  run();
  for (auto _ : state) {
    run();
    benchmark::ClobberMemory();
  }
  set_counters(state, n, count);
}

void register_all() {
  std::vector<std::pair<int64_t, int64_t>> cases;  // (n, batch)
  // Powers of two, and the small mixed-radix sizes of the fixed-length codelets (10,
  // 12, 20), on every batch.
  for (int64_t n : {8, 10, 12, 16, 20, 32, 64, 128})
    for (int64_t count : {256, 1024, 4096, 16384}) cases.push_back({n, count});
  // Larger mixed-radix sizes (radix 3 and 5 stages), the paddings convolutions now get
  // (34 -> 36, 18 -> 18), beside the powers of two above.
  for (int64_t n : {18, 24, 36, 40, 48, 72, 80, 96})
    for (int64_t count : {1024, 4096}) cases.push_back({n, count});
  for (auto [n, count] : cases) {
    const int64_t bytes = count * (n * n * 4 + n * (n / 2 + 1) * 8);
    if (bytes > kMaxBytes) continue;
    // Args append /<n>/<batch> to the names.
    const bool with_c2r = n <= 20 || (n & (n - 1)) == 0;
    for (auto [own, fftw, direction] :
         {std::tuple{"fft/own", "fft/fftw", Direction::r2c},
          std::tuple{"fft/c2r-own", "fft/c2r-fftw", Direction::c2r}}) {
      if (direction == Direction::c2r && !with_c2r) continue;
      benchmark::RegisterBenchmark(own, bm_own, std::optional<cpu::OwnFftIsa>{}, direction,
                                   cpu::OwnFftStore::automatic)
          ->Args({n, count})
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
      // Out of cache, both ways of writing the output, forced.
      if (count >= 4096 && n <= 32)
        for (auto [suffix, store] : {std::pair{"-cached", cpu::OwnFftStore::cached},
                                     std::pair{"-streamed", cpu::OwnFftStore::streamed}})
          benchmark::RegisterBenchmark((std::string(own) + suffix).c_str(), bm_own,
                                       std::optional<cpu::OwnFftIsa>{}, direction, store)
              ->Args({n, count})
              ->Unit(benchmark::kMicrosecond)
              ->UseRealTime();
      benchmark::RegisterBenchmark(fftw, bm_fftw, direction)
          ->Args({n, count})
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    }
  }
  // Each instruction-set path this CPU runs, forced: fft/own-<isa>/<n>/<batch>.
  for (cpu::OwnFftIsa isa : cpu::supported_own_fft_isas())
    for (int64_t n : {8, 12, 16, 20, 32, 36, 64})
      benchmark::RegisterBenchmark((std::string("fft/own-") + cpu::to_string(isa)).c_str(), bm_own,
                                   std::optional<cpu::OwnFftIsa>{isa}, Direction::r2c,
                                   cpu::OwnFftStore::automatic)
          ->Args({n, 1024})
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
  // NHWC vs NCHW planes, ours and FFTW's with the same strides: 64 images of C channels.
  for (int64_t n : {8, 16, 32, 64})
    for (int64_t C : {16, 64}) {
      const int64_t images = std::max<int64_t>(1, 4096 / (C * std::max<int64_t>(1, n / 16)));
      for (auto [name, own, nhwc] :
           {std::tuple{"fft/nhwc-own", true, true}, std::tuple{"fft/nhwc-fftw", false, true},
            std::tuple{"fft/nchw-own", true, false}, std::tuple{"fft/nchw-fftw", false, false}})
        benchmark::RegisterBenchmark(name, bm_layout, own, nhwc)
            ->Args({n, C, images})
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
    }
  // Small batches: within-transform vs batch split.
  for (int64_t n : {16, 32, 64, 128})
    for (int64_t count : {1, 2, 5, 8, 16})
      for (auto [name, split] :
           {std::pair{"fft/split-batch", std::optional{cpu::OwnFftSplit::batch}},
            std::pair{"fft/split-within", std::optional{cpu::OwnFftSplit::within}},
            std::pair{"fft/split-fftw", std::optional<cpu::OwnFftSplit>{}}})
        benchmark::RegisterBenchmark(name, bm_split, split)
            ->Args({n, count})
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
}

}  // namespace
}  // namespace tunescope

int main(int argc, char** argv) {
  return tunescope::run_benchmark_program(argc, argv, tunescope::g_threads,
                                          tunescope::register_all);
}
