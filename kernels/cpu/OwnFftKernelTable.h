// What OwnFft2d hands its per-instruction-set kernels (OwnFftKernels.h): plain structs
// of sizes and pointers, so nothing with external linkage crosses into code compiled
// for another instruction set, and the three kernel tables they export.
#pragma once

#include <complex>
#include <cstdint>

namespace tunescope::cpu {

// A view of the twiddles of a complex FFT of length n (see OwnFftTwiddles in OwnFft.cpp):
// the radices in stage order, per stage and p < m / r the r - 1 twiddles W_m^(jp) as
// (re, im) pairs, and the roots W_n^k, k < n / 2.
struct OwnFftFactors {
  int64_t n = 0;
  const int* radices = nullptr;
  int64_t radix_count = 0;
  const float* stages = nullptr;
  const float* roots = nullptr;
};

// One 2-D transform: the packed rows (length cols / 2), the columns (length rows), and
// the roots of length cols that split the packed row spectra.
struct OwnFftPlan {
  int64_t rows = 0, cols = 0;
  OwnFftFactors row, col, real;
  // The 1 x cols transform of this plan's rows, for one plane on the vector path (its
  // rows as the planes of a batch); null when rows == 1.
  const OwnFftPlan* rows_plan = nullptr;
};

// Rows that one sweep of the row passes' interleave / deinterleave moves: enough that
// the sweep is a whole number of 8x8 transposes (8 / gcd(cols, 8)), so short rows (10,
// 12, 20) need no element-by-element tail. Rows are consecutive in a plane for every
// element stride. Static for the reason own_fft_group_lanes is (below).
static constexpr int64_t own_fft_rows_per_sweep(int64_t cols) {
  int64_t rows = 1;
  while (rows < 8 && (rows * cols) % 8 != 0) rows *= 2;
  return rows;
}

// Per-thread scratch for one group of up to kOwnFftMaxLanes planes (floats): `spec` the
// half spectra, lane-interleaved complex (element 2i the real parts of bin i, 2i + 1 the
// imaginary parts: the planes' own layout, so a group moves in or out with one
// transpose sweep); xr, xi, yr, yi one row or column as split re/im with its Stockham
// partner; `line` own_fft_rows_per_sweep(cols) lane-interleaved real rows; `plane` one
// plane's half spectrum, the copy an inverse transforms so that its input stays
// unchanged; `stage` a group's output in its planes' layout (spectra or real planes, as
// large as `spec`), written there first when a streamed call copies it out whole.
inline constexpr int kOwnFftMaxLanes = 8;
struct OwnFftScratch {
  float *spec, *xr, *xi, *yr, *yi, *line, *plane, *stage;
};

// Where the real planes of a call lie (floats): element (r, c) of plane i at
// i * plane + (r * cols + c) * element. element 1 is a plane per block of memory
// (NCHW-like); element C with plane 1 is C interleaved planes (NHWC-like).
struct OwnFftRealLayout {
  int64_t plane = 1, element = 1;
};

// Whether a plane left alone runs on the vector path of `width` lanes (W of its rows,
// then W of its columns per vector: see OwnFftPlanePhases) rather than on scalar code.
static constexpr bool own_fft_plane_vectorises(int width, const OwnFftPlan& plan) {
  return width > 1 && plan.rows_plan && plan.rows >= width && plan.cols >= 2 * width;
}

// Planes in the next group of a call with `remaining` planes left, on `width` lanes:
// full groups while they last; then, for planes of at least 4W columns that vectorise
// alone, one plane at a time; else the rest as one partial vector group when at least
// kOwnFftMinVectorLanes remain, else single planes. A partial group costs a full one: 5
// planes took 336 us as a group against 38 us per plane alone at 128x128, 13.1 against
// 2.0 at 32x32, but 3.7 against 1.1 at 16x16 (AVX-512 path, docs/BENCHMARKS.md); on
// scalar code a group of 8 costs about two single planes (4.0 us against 2.0 us at
// 16x16). Static: no copy built for one instruction set stands in for another's (see
// OwnFftKernels.h).
inline constexpr int kOwnFftMinVectorLanes = 3;
static constexpr int own_fft_group_lanes(int width, int64_t remaining, const OwnFftPlan& plan) {
  if (remaining >= width) return width;
  if (own_fft_plane_vectorises(width, plan) && plan.cols >= 4 * width) return 1;
  return remaining >= kOwnFftMinVectorLanes ? static_cast<int>(remaining) : 1;
}

// The phases of one group of `lanes` planes (up to `width`: kOwnFftMaxLanes on a vector
// path, 1 on scalar), on the group's lane-interleaved half spectra in scratch.spec. A
// whole transform is rows, columns, then store (forward) or load, columns, rows
// (inverse); each phase may be split over threads by its range (rows [r0, r1), columns
// [k0, k1)) with a barrier between phases, every thread passing the same `spec` and its
// own line buffers. The same code runs whether split or not, so the split does not
// change a bit.
struct OwnFftGroupPhases {
  int width;
  // Row r: r2c of the real rows [r0, r1) into spec.
  void (*forward_rows)(const OwnFftPlan&, const OwnFftScratch&, const float* real, OwnFftRealLayout,
                       int lanes, int64_t r0, int64_t r1);
  // Complex FFT of columns [k0, k1) of spec, forward or inverse.
  void (*forward_columns)(const OwnFftPlan&, const OwnFftScratch&, int64_t k0, int64_t k1);
  void (*inverse_columns)(const OwnFftPlan&, const OwnFftScratch&, int64_t k0, int64_t k1);
  // Spectrum rows [r0, r1) from spec to the planes' spectra (forward) or back (inverse).
  void (*store_rows)(const OwnFftPlan&, const OwnFftScratch&, std::complex<float>* spectrum,
                     int64_t complex_stride, int lanes, int64_t r0, int64_t r1);
  void (*load_rows)(const OwnFftPlan&, const OwnFftScratch&, const std::complex<float>* spectrum,
                    int64_t complex_stride, int lanes, int64_t r0, int64_t r1);
  // c2r of spec rows [r0, r1) into the real rows.
  void (*inverse_rows)(const OwnFftPlan&, const OwnFftScratch&, float* real, OwnFftRealLayout,
                       int lanes, int64_t r0, int64_t r1);
};

// The phases of one plane alone on the vector path, used for a single plane left after
// the groups when own_fft_plane_vectorises(W, plan): W of its rows per vector (the r2c rows of the
// plan's rows_plan), then W adjacent columns per vector, in place in the spectrum.
// Ranges count units of W rows [u0, u1) or W columns; the inverse first copies the
// spectrum rows to scratch.plane (`load`), which every thread then shares, as the split
// shares `spec` in the group phases. Split or not, the same bits.
struct OwnFftPlanePhases {
  void (*forward_rows)(const OwnFftPlan&, const OwnFftScratch&, const float* real, OwnFftRealLayout,
                       std::complex<float>* spectrum, int64_t u0, int64_t u1);
  void (*forward_columns)(const OwnFftPlan&, const OwnFftScratch&, std::complex<float>* spectrum,
                          int64_t u0, int64_t u1);
  void (*load)(const OwnFftPlan&, const OwnFftScratch&, const std::complex<float>* spectrum,
               int64_t u0, int64_t u1);
  void (*inverse_columns)(const OwnFftPlan&, const OwnFftScratch&, int64_t u0, int64_t u1);
  void (*inverse_rows)(const OwnFftPlan&, const OwnFftScratch&, float* real, OwnFftRealLayout,
                       int64_t u0, int64_t u1);
};

// Unnormalised r2c / c2r of `count` planes (spectra complex_stride bins apart), and the
// phases of a vector group, of a single plane on scalar code and of a single plane on
// the vector path for OwnFft2d's split of one transform over threads. `streamed`: the
// call's data outgrow the cache, so full groups of small planes write their output
// around it (staged in scratch.stage, then non-temporal stores of whole lines) where
// their output planes lie in blocks (see OwnFftStore in OwnFft.h).
struct OwnFftKernelTable {
  void (*forward)(const OwnFftPlan&, const OwnFftScratch&, const float* real, OwnFftRealLayout,
                  std::complex<float>* spectrum, int64_t complex_stride, int64_t count,
                  bool streamed);
  void (*inverse)(const OwnFftPlan&, const OwnFftScratch&, const std::complex<float>* spectrum,
                  int64_t complex_stride, float* real, OwnFftRealLayout, int64_t count,
                  bool streamed);
  OwnFftGroupPhases group, single;
  OwnFftPlanePhases plane;
};

// One plane at a time, for any x86-64 (and any other) CPU.
extern const OwnFftKernelTable kOwnFftScalarKernels;
// Eight planes per 256-bit vector, built for x86-64-v3 (AVX2, FMA).
extern const OwnFftKernelTable kOwnFftAvx2Kernels;
// Eight planes per vector, built for x86-64-v4 (AVX-512 F/BW/DQ/VL: EVEX encoding, 32
// vector registers).
extern const OwnFftKernelTable kOwnFftAvx512Kernels;

}  // namespace tunescope::cpu
