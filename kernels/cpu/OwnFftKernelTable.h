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
};

// Per-thread scratch for one group of up to kOwnFftMaxLanes planes (floats): `spec` the
// half spectra, lane-interleaved complex (element 2i the real parts of bin i, 2i + 1 the
// imaginary parts: the planes' own layout, so a group moves in or out with one
// transpose sweep); xr, xi, yr, yi one row or column as split re/im with its Stockham
// partner; `line` one lane-interleaved real row.
inline constexpr int kOwnFftMaxLanes = 8;
struct OwnFftScratch {
  float *spec, *xr, *xi, *yr, *yi, *line;
};

// Unnormalised r2c / c2r of `count` planes (strides as in OwnFft2d).
struct OwnFftKernelTable {
  void (*forward)(const OwnFftPlan&, const OwnFftScratch&, const float* real, int64_t real_stride,
                  std::complex<float>* spectrum, int64_t complex_stride, int64_t count);
  void (*inverse)(const OwnFftPlan&, const OwnFftScratch&, const std::complex<float>* spectrum,
                  int64_t complex_stride, float* real, int64_t real_stride, int64_t count);
};

// One plane at a time, for any x86-64 (and any other) CPU.
extern const OwnFftKernelTable kOwnFftScalarKernels;
// Eight planes per 256-bit vector, built for x86-64-v3 (AVX2, FMA).
extern const OwnFftKernelTable kOwnFftAvx2Kernels;
// Eight planes per vector, built for x86-64-v4 (AVX-512 F/BW/DQ/VL: EVEX encoding, 32
// vector registers).
extern const OwnFftKernelTable kOwnFftAvx512Kernels;

}  // namespace tunescope::cpu
