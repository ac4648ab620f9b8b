// The "fft-own" convolution algorithm: FftConvolution with tunescope's own FFT; the run's fft_tile
// knob (FftTileChoice.h) sets its tiling (FftTiling.h), fft_workspace whether it keeps spectra.
#include <memory>

#include "core/base/Registry.h"
#include "kernels/cpu/FftConvolution.h"
#include "kernels/cpu/OwnFftTransform.h"
#include "kernels/shared/FftWorkspace.h"

namespace tunescope::cpu {
namespace {

// A flop in our FFT's 16x16 and 32x32 tile transforms cost 1.3-1.9x one in its large
// untiled transforms (docs/BENCHMARKS.md, "FFT tiling"): its batched large transforms
// are efficient and small ones pay the packing and per-call work over fewer points.
constexpr double kTiledFlopWeight = 1.7;

const ConvAlgorithmRegistration registration("cpu", "fft-own", [](const KnobValues& knobs) {
  return std::make_unique<FftConvolution>(
      "fft-own", TUNESCOPE_FFT_KERNEL_NAMES("fft-own"), std::make_unique<OwnFftTransformFactory>(),
      FftConvolution::kDefaultChunkBudgetBytes, fft_tile_knob.get(knobs), kTiledFlopWeight,
      fft_workspace_knob.get(knobs) == FftWorkspace::cache);
});

}  // namespace
}  // namespace tunescope::cpu
