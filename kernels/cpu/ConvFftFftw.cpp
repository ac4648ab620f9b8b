// The "fft-fftw" convolution algorithm: FftConvolution with FFTW transforms; TUNESCOPE_FFT_TILE
// forces its tiling (FftTiling.h).
#include <memory>

#include "core/base/Registry.h"
#include "kernels/cpu/FftConvolution.h"
#include "kernels/cpu/FftwTransform.h"

namespace tunescope::cpu {
namespace {

const ConvAlgorithmRegistration registration("cpu", "fft-fftw", [] {
  return std::make_unique<FftConvolution>("fft-fftw", TUNESCOPE_FFT_KERNEL_NAMES("fft-fftw"),
                                          std::make_unique<FftwTransformFactory>(),
                                          FftConvolution::kDefaultChunkBudgetBytes,
                                          fft_tile_choice_from_env());
});

}  // namespace
}  // namespace tunescope::cpu
