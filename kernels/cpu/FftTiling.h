// Tiling for FFT convolution (overlap-save): instead of transforming each whole padded
// plane at good_size(H + 2 pad), the output is cut into tiles of T rows x U columns and
// each tile's input patch of (T + R - 1) x (U + S - 1) is transformed at that small size,
// multiplied with the filter spectrum of the same size and transformed back; every
// position of the inverse that did not wrap around is kept. Small transforms cost fewer
// flops per point (log2 of a smaller size) and stay in cache, but neighbouring patches
// overlap by R - 1 rows, so the products and transforms cover more points in all.
// choose_fft_tiles weighs both with a flop model and picks the cheapest geometry.
//
// The choice can be forced: FftConvolution takes an FftTileChoice, the run's
// `fft_tile` knob, which the registered fft-fftw / fft-own receive as a knob (FftTileChoice.h),
// so the tuner, a benchmark or a test can try tiled and untiled transforms.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/base/ConvProblem.h"
#include "kernels/cpu/FftTileChoice.h"
#include "kernels/cpu/FftTransform.h"

namespace tunescope::cpu {

// How one problem's planes map onto transforms. Untiled: one tile per plane of
// fft_h x fft_w >= (H + 2 pad) x (W + 2 pad). Tiled (stride 1 only): forward and backward
// filter cut the output (P x Q) into tiles of tile_h x tile_w; backward data cuts dx
// (H x W) the same way; fft = tile + kernel - 1 in each dimension.
struct FftTileGeometry {
  bool tiled = false;
  int64_t fft_h = 1, fft_w = 1;
  int64_t tile_h = 1, tile_w = 1;
  int64_t out_tiles_h = 1, out_tiles_w = 1;  // over y / dy (forward, backward filter)
  int64_t in_tiles_h = 1, in_tiles_w = 1;    // over dx (backward data)

  int64_t out_tiles() const { return out_tiles_h * out_tiles_w; }
  int64_t in_tiles() const { return in_tiles_h * in_tiles_w; }
};

// The untiled geometry of `problem` with transforms of `transforms`.
FftTileGeometry untiled_geometry(const ConvProblem& problem, const FftTransformFactory& transforms);
// The tiled geometry with transforms of fft_h x fft_w, or nullopt when the problem is
// strided or a transform is not larger than the kernel.
std::optional<FftTileGeometry> tiled_geometry(const ConvProblem& problem, int64_t fft_h,
                                              int64_t fft_w);
// Estimated flops per image of one pass (forward; the backward passes do the same
// transforms and products): transforms of C + K planes per tile at 2.5 n log2 n, the
// complex product of 8 C K flops per bin, and the K C filter transforms shared by the batch.
double fft_conv_cost(const ConvProblem& problem, const FftTileGeometry& geometry);
// automatic: the cheapest of untiled and every tiled geometry with power-of-two
// transforms from 8 up to the untiled size, by fft_conv_cost with tiled costs multiplied
// by tiled_flop_weight (untiled on ties). The weight is what a flop costs in small tile
// transforms relative to one in the large untiled transform with the same library, as
// measured (docs/BENCHMARKS.md, "FFT tiling"): each algorithm passes its own.
// untiled: untiled; fixed: tiles of good_size(fft_size) when tiled_geometry allows it
// and the untiled transform is larger than the tile's in some dimension, else untiled (a strided
// problem; FftConvolution refuses a fixed size that does not exceed a stride-1 problem's kernel,
// see fixed_tile_reason). Empty when `choice` can run `problem`; else why not: a fixed tile
// transform that is not larger than the kernel of a stride-1 problem (no output position would
// survive the wrap-around). Strided problems run untiled whatever the choice.
std::string fixed_tile_reason(const ConvProblem& problem, const FftTileChoice& choice,
                              const FftTransformFactory& transforms);
FftTileGeometry choose_fft_tiles(const ConvProblem& problem, const FftTileChoice& choice,
                                 const FftTransformFactory& transforms,
                                 double tiled_flop_weight = 1.0);

}  // namespace tunescope::cpu
