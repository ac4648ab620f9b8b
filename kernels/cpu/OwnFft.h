// tunescope's own batched 2-D real FFT for the many small transforms of FFT convolution
// (docs/ARCHITECTURE.md problem 2): library FFTs parallelise one large transform, we need
// thousands of 8x8..128x128 ones. Eight planes are transformed at once, one per SIMD
// lane (Vec8), so every butterfly is plain vector arithmetic with no shuffles (the
// kernels are built for AVX-512, AVX2 and plain x86-64 and chosen at run time); rows
// first (real-to-half-complex), then columns (complex), each a mixed-radix Stockham FFT
// (radix 4, one radix 2 when the power of two is odd, then radix 3 and 5) — Stockham
// auto-sorts, so there is no bit-reversal pass; lengths up to 20 run fixed-length
// codelets of the same stages, unrolled in registers (OwnFftKernels.h). Sizes are
// 2^a 3^b 5^c, so a convolution pads 34 to 36 rather than 64. Layout and scaling are FFTW's (see
// FftShape in FftTransform.h); real planes may be strided like FFTW's istride/idist, so NCHW planes
// (element stride 1) and NHWC ones (element stride C, planes 1 apart) are read and
// written in place by the first and last pass, with no transpose pass.
//
// Leftover planes after the full groups go as one partial group (3 to 7, zeros in the
// empty lanes) or one at a time (1 or 2): on the vector path, eight of the plane's rows
// and then eight of its columns per vector, when it has at least 8 rows and 16 columns;
// else on scalar code.
//
// Parallel (the paper's scheme): over the batch in groups of eight planes, or, when a
// call has fewer groups than threads, within each 2-D transform: rows in parallel
// blocks, barrier, columns in parallel blocks, barrier, then the store (see OwnFftSplit).
// A call whose planes and spectra outgrow the cache writes its output around it, a
// group at a time in whole lines (see OwnFftStore).
#pragma once

#include <complex>
#include <cstdint>
#include <memory>

#include "kernels/cpu/OwnFftIsa.h"
#include "kernels/cpu/OwnFftKernelTable.h"
#include "kernels/shared/FftLengths.h"

namespace tunescope {
class ThreadPool;
}

namespace tunescope::cpu {

// How the pooled calls spread a batch over threads. batch: groups of eight planes per
// thread (what vectorises; a call of fewer groups than threads leaves threads idle).
// within: one group at a time, each 2-D transform split over all threads by rows, then
// by columns. automatic: within when the call has fewer groups of eight planes than the
// pool has threads and a plane has at least OwnFft2d::kSplitMinPoints points (below
// that, three barriers cost more than the transform), else batch.
enum class OwnFftSplit { automatic, batch, within };

// How a call writes its output. cached: plain stores, the output stays in cache for
// whoever reads it next. streamed: for calls whose planes and spectra outgrow the cache
// anyway, full groups of small planes stage their output and write it around the cache
// in whole lines (see stream_copy in OwnFftKernels.h). automatic: streamed when the
// call's data exceed OwnFft2d::stream_min_bytes(). Either gives the same bits.
enum class OwnFftStore { automatic, cached, streamed };

// Transforms of one size: rows x cols reals <-> rows x (cols / 2 + 1) bins, both sizes
// that supports() accepts. Cheap to construct (twiddle tables are built once per length
// for the whole process and shared); const methods are safe to call concurrently.
class OwnFft2d {
 public:
  static constexpr int64_t kMaxSize = kOwnFftMaxLength;
  // 1, or an even n <= kMaxSize with no prime factor but 2, 3 and 5. Even because rows
  // are transformed as complex sequences of half their length.
  static bool supports(int64_t n);

  // Throws Error(unsupported) unless supports(rows) and supports(cols) and the CPU runs
  // `isa` (default: TUNESCOPE_FFT_ISA, else the widest this CPU has; see OwnFftIsa.h).
  OwnFft2d(int64_t rows, int64_t cols, OwnFftIsa isa = default_own_fft_isa());

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t bins() const { return rows_ * (cols_ / 2 + 1); }
  OwnFftIsa isa() const { return isa_; }

  // Planes of fewer points than this are never split within a transform (automatic).
  // Each of the three barriers costs ~1.4 us on the project's 2-core VM (16x16, one
  // plane: 5.4 us split against 1.2 us whole), and splitting saves at most
  // (threads - 1) / threads of the transform: one plane alone takes ~10 us at 64x64 (no
  // gain possible on 2 threads) and ~40 us at 128x128. See docs/BENCHMARKS.md.
  static constexpr int64_t kSplitMinPoints = 128 * 128;

  // Unnormalised forward r2c of `count` planes: element (r, c) of real plane i at
  // real + i * real_layout.plane + (r * cols + c) * real_layout.element (floats), its
  // half spectrum at spectrum + i * complex_stride (bins, >= bins()). The planes must
  // not overlap.
  void forward(const float* real, OwnFftRealLayout real_layout, std::complex<float>* spectrum,
               int64_t complex_stride, int64_t count,
               OwnFftStore store = OwnFftStore::automatic) const;
  // Unnormalised inverse c2r (the result is rows * cols times the signal) of Hermitian
  // half spectra; `spectrum` is left unchanged.
  void inverse(const std::complex<float>* spectrum, int64_t complex_stride, float* real,
               OwnFftRealLayout real_layout, int64_t count,
               OwnFftStore store = OwnFftStore::automatic) const;

  // The same, split over `pool` as `split` says. Every split gives the same bits: groups
  // of eight planes are the unit of the vector paths and the within-transform phases
  // run the same code on the same data. `store` is chosen for the whole call (the
  // within-transform split, for calls of a few planes, always writes cached).
  void forward(ThreadPool& pool, const float* real, OwnFftRealLayout real_layout,
               std::complex<float>* spectrum, int64_t complex_stride, int64_t count,
               OwnFftSplit split = OwnFftSplit::automatic,
               OwnFftStore store = OwnFftStore::automatic) const;
  void inverse(ThreadPool& pool, const std::complex<float>* spectrum, int64_t complex_stride,
               float* real, OwnFftRealLayout real_layout, int64_t count,
               OwnFftSplit split = OwnFftSplit::automatic,
               OwnFftStore store = OwnFftStore::automatic) const;
  // What `automatic` picks for `count` planes on `threads` threads.
  OwnFftSplit split_for(int threads, int64_t count) const;
  // What `automatic` picks for a call of `count` planes: streamed when their real
  // planes and spectra together exceed stream_min_bytes().
  OwnFftStore store_for(int64_t count) const;
  // A third of the last-level cache (one core's cache domain, from sysfs; 32 MiB when
  // unknown). On the project's VM the 32 MiB L3 is shared with other tenants and holds
  // 7-10 MB of a batch (docs/BENCHMARKS.md): streaming was even or slower at 9.4 MB
  // (8x8, batch 16384), where part of the data stays cached between calls, and faster
  // from 14.4 MB (10x10, batch 16384, one thread: 0.80-1.01x FFTW's time cached,
  // 0.57-0.81x streamed).
  static int64_t stream_min_bytes();

 private:
  int64_t rows_, cols_;
  OwnFftIsa isa_;
  const OwnFftKernelTable* kernels_;
  std::shared_ptr<const OwnFftPlan> plan_;       // twiddle views; the tables live for the process
  std::shared_ptr<const OwnFftPlan> rows_plan_;  // plan_->rows_plan: 1 x cols
};

}  // namespace tunescope::cpu
