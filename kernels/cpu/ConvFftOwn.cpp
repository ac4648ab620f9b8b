// The "fft-own" convolution algorithm: FftConvolution with tunescope's own FFT.
#include <memory>

#include "core/base/Registry.h"
#include "kernels/cpu/FftConvolution.h"
#include "kernels/cpu/OwnFftTransform.h"

namespace tunescope::cpu {
namespace {

const ConvAlgorithmRegistration registration("cpu", "fft-own", [] {
  return std::make_unique<FftConvolution>("fft-own", TUNESCOPE_FFT_KERNEL_NAMES("fft-own"),
                                          std::make_unique<OwnFftTransformFactory>());
});

}  // namespace
}  // namespace tunescope::cpu
