// The "fft-own" convolution algorithm: FftConvolution with tunescope's own FFT; the run's fft_tile
// (ConvOptions) sets its tiling (FftTiling.h).
#include <memory>

#include "core/base/Registry.h"
#include "kernels/cpu/FftConvolution.h"
#include "kernels/cpu/OwnFftTransform.h"

namespace tunescope::cpu {
namespace {

// A flop in our FFT's 16x16 and 32x32 tile transforms cost 1.3-1.9x one in its large
// untiled transforms (docs/BENCHMARKS.md, "FFT tiling"): its batched large transforms
// are efficient and small ones pay the packing and per-call work over fewer points.
constexpr double kTiledFlopWeight = 1.7;

const ConvAlgorithmRegistration registration("cpu", "fft-own", [](const ConvOptions& options) {
  return std::make_unique<FftConvolution>("fft-own", TUNESCOPE_FFT_KERNEL_NAMES("fft-own"),
                                          std::make_unique<OwnFftTransformFactory>(),
                                          FftConvolution::kDefaultChunkBudgetBytes,
                                          options.fft_tile, kTiledFlopWeight);
});

}  // namespace
}  // namespace tunescope::cpu
