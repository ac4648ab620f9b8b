// The run-wide knobs of a RunConfig that some convolution algorithms read. The engine
// passes them when it makes an algorithm by name (Registry::make_conv_algorithm), so a
// knob reaches the kernels without the engine or a front end including kernels/; an
// algorithm reads the fields it has a use for and ignores the rest.
#pragma once

#include "core/base/FftTileChoice.h"

namespace tunescope {

struct ConvOptions {
  // CPU FFT convolution of stride-1 problems (ConvAlgorithm::fft_tile_applies).
  FftTileChoice fft_tile;
  bool operator==(const ConvOptions&) const = default;
};

}  // namespace tunescope
