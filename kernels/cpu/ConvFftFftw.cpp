// The "fft-fftw" convolution algorithm: FftConvolution with FFTW transforms; the run's fft_tile
// knob (FftTileChoice.h) sets its tiling (FftTiling.h), fft_workspace whether it keeps spectra.
#include <memory>

#include "core/base/Registry.h"
#include "kernels/cpu/FftConvolution.h"
#include "kernels/cpu/FftwTransform.h"
#include "kernels/shared/FftWorkspace.h"

namespace tunescope::cpu {
namespace {

// FFTW's tile transforms cost what the flop model says relative to its untiled ones or
// less (odd untiled sizes such as 70 and 135 run slower per flop; docs/BENCHMARKS.md,
// "FFT tiling"): the plain model decides.
constexpr double kTiledFlopWeight = 1.0;

const ConvAlgorithmRegistration registration("cpu", "fft-fftw", [](const KnobValues& knobs) {
  return std::make_unique<FftConvolution>(
      "fft-fftw", TUNESCOPE_FFT_KERNEL_NAMES("fft-fftw"), std::make_unique<FftwTransformFactory>(),
      FftConvolution::kDefaultChunkBudgetBytes, fft_tile_knob.get(knobs), kTiledFlopWeight,
      fft_workspace_knob.get(knobs) == FftWorkspace::cache);
});

}  // namespace
}  // namespace tunescope::cpu
