// The FFT tiling knob (config key `fft_tile`, declared here by the CPU FFT convolutions
// that read it): whether FFT convolution of a stride-1 layer transforms each whole
// padded plane (`off`), cuts it into tiles transformed at a fixed power-of-two size
// (overlap-save, kernels/cpu/FftTiling.h), or lets the algorithm's flop model pick per
// layer (`auto`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/Knob.h"

namespace tunescope {

struct FftTileChoice {
  enum class Mode { automatic, untiled, fixed };
  Mode mode = Mode::automatic;
  int64_t fft_size = 0;  // fixed: the transform size of a tile in both dimensions

  static FftTileChoice automatic() { return {}; }
  static FftTileChoice untiled() { return {Mode::untiled, 0}; }
  static FftTileChoice fixed(int64_t fft_size) { return {Mode::fixed, fft_size}; }
  std::string to_string() const;  // "auto", "off" or the size
  bool operator==(const FftTileChoice&) const = default;
};

// The tile transform sizes both CPU FFTs run at their best: powers of two (FFTW at
// 18x18 tiles ran 1.7x the time of 16x16 ones, docs/BENCHMARKS.md "FFT tiling").
inline constexpr int64_t kMinFftTile = 4;
inline constexpr int64_t kMaxFftTile = 4096;
inline constexpr const char* kFftTileValues =
    "auto, off, or a power of two from 4 to 4096 such as 16";

// nullopt for anything but "auto", "off" and a decimal power of two in
// [kMinFftTile, kMaxFftTile].
std::optional<FftTileChoice> parse_fft_tile_choice(std::string_view text);

extern const Knob<FftTileChoice> fft_tile_knob;

}  // namespace tunescope
