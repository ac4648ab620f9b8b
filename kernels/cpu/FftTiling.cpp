// Tile geometry and the tiling rule of FFT convolution (see FftTiling.h).
#include "kernels/cpu/FftTiling.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/base/Error.h"
#include "kernels/shared/ConvArgs.h"

namespace tunescope::cpu {

namespace {

double transform_flops(int64_t rows, int64_t cols) {
  const double points = static_cast<double>(rows * cols);
  return 2.5 * points * std::log2(points);
}

// Tile transform sizes tried by the automatic rule: powers of two from 8 that exceed the
// kernel, up to the first one at least the untiled size. Only powers of two: both
// transforms are fastest there, and FFTW at 18x18 tiles ran 1.7x the time of 16x16 tiles
// on tiling.k3_128c4 (docs/BENCHMARKS.md, "FFT tiling"), which a flop model cannot see.
std::vector<int64_t> tile_sizes(int64_t kernel, int64_t untiled) {
  std::vector<int64_t> out;
  for (int64_t n = 8; n <= kMaxFftTile; n *= 2) {
    if (n > kernel) out.push_back(n);
    if (n >= untiled) break;
  }
  return out;
}

}  // namespace

FftTileGeometry untiled_geometry(const ConvProblem& p, const FftTransformFactory& transforms) {
  FftTileGeometry g;
  g.fft_h = transforms.good_size(p.input.h + 2 * p.pad_h);
  g.fft_w = transforms.good_size(p.input.w + 2 * p.pad_w);
  const Shape4 out = p.output();
  g.tile_h = out.h, g.tile_w = out.w;
  return g;
}

std::optional<FftTileGeometry> tiled_geometry(const ConvProblem& p, int64_t fft_h, int64_t fft_w) {
  // Strided passes keep every u-th output of a stride-1 correlation: tiles would
  // transform the skipped positions too, and the untiled path already handles them.
  if (p.stride_h != 1 || p.stride_w != 1) return std::nullopt;
  if (fft_h <= p.kernel_h || fft_w <= p.kernel_w) return std::nullopt;
  FftTileGeometry g;
  g.tiled = true;
  g.fft_h = fft_h, g.fft_w = fft_w;
  g.tile_h = fft_h - p.kernel_h + 1, g.tile_w = fft_w - p.kernel_w + 1;
  const Shape4 out = p.output();
  g.out_tiles_h = ceil_div(out.h, g.tile_h), g.out_tiles_w = ceil_div(out.w, g.tile_w);
  g.in_tiles_h = ceil_div(p.input.h, g.tile_h), g.in_tiles_w = ceil_div(p.input.w, g.tile_w);
  return g;
}

double fft_conv_cost(const ConvProblem& p, const FftTileGeometry& g) {
  const double C = static_cast<double>(p.input.c), K = static_cast<double>(p.out_channels);
  const double tiles = static_cast<double>(std::max(g.out_tiles(), g.in_tiles()));
  const double transform = transform_flops(g.fft_h, g.fft_w);
  const double bins = static_cast<double>(g.fft_h * (g.fft_w / 2 + 1));
  return tiles * ((C + K) * transform + 8.0 * C * K * bins) +
         K * C * transform / static_cast<double>(p.input.n);
}

std::string fixed_tile_reason(const ConvProblem& p, const FftTileChoice& choice,
                              const FftTransformFactory& transforms) {
  if (choice.mode != FftTileChoice::Mode::fixed || p.stride_h != 1 || p.stride_w != 1) return {};
  const int64_t size = transforms.good_size(choice.fft_size);
  if (size > p.kernel_h && size > p.kernel_w) return {};
  return cat(
      "fft_tile ", choice.fft_size, " does not exceed the ", p.kernel_h, "x", p.kernel_w,
      " kernel (a tile transform must be larger than the kernel; use a larger size, auto or off)");
}

FftTileGeometry choose_fft_tiles(const ConvProblem& p, const FftTileChoice& choice,
                                 const FftTransformFactory& transforms, double tiled_flop_weight) {
  const FftTileGeometry untiled = untiled_geometry(p, transforms);
  switch (choice.mode) {
    case FftTileChoice::Mode::untiled: return untiled;
    case FftTileChoice::Mode::fixed: {
      // One knob serves every layer of a net: a plane whose whole untiled transform is
      // no larger than the tile's would only be transformed at a larger size, so it runs
      // untiled (resnet18-small's 8x8 and 4x4 stages under fft_tile 16 or 32).
      const int64_t size = transforms.good_size(choice.fft_size);
      if (size >= untiled.fft_h && size >= untiled.fft_w) return untiled;
      return tiled_geometry(p, size, size).value_or(untiled);
    }
    case FftTileChoice::Mode::automatic: break;
  }
  FftTileGeometry best = untiled;
  double best_cost = fft_conv_cost(p, untiled);
  for (int64_t rows : tile_sizes(p.kernel_h, untiled.fft_h))
    for (int64_t cols : tile_sizes(p.kernel_w, untiled.fft_w)) {
      const auto tiled = tiled_geometry(p, transforms.good_size(rows), transforms.good_size(cols));
      if (!tiled) continue;
      const double cost = tiled_flop_weight * fft_conv_cost(p, *tiled);
      if (cost < best_cost) best = *tiled, best_cost = cost;
    }
  return best;
}

}  // namespace tunescope::cpu
