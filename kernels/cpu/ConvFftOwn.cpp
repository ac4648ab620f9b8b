// The "fft-own" convolution algorithm: FftConvolution with tunescope's own FFT; TUNESCOPE_FFT_TILE
// forces its tiling (FftTiling.h).
#include <memory>

#include "core/base/Registry.h"
#include "kernels/cpu/FftConvolution.h"
#include "kernels/cpu/OwnFftTransform.h"

namespace tunescope::cpu {
namespace {

const ConvAlgorithmRegistration registration("cpu", "fft-own", [] {
  return std::make_unique<FftConvolution>("fft-own", TUNESCOPE_FFT_KERNEL_NAMES("fft-own"),
                                          std::make_unique<OwnFftTransformFactory>(),
                                          FftConvolution::kDefaultChunkBudgetBytes,
                                          fft_tile_choice_from_env());
});

}  // namespace
}  // namespace tunescope::cpu
