// The cuda backend's "fft-cufft" convolution: FftConvolutionCuda with cuFFT transforms.
#include <memory>

#include "core/base/Registry.h"
#include "kernels/cuda/CufftTransform.h"
#include "kernels/cuda/FftConvolutionCuda.h"

namespace tunescope::cuda {
namespace {

const ConvAlgorithmRegistration registration("cuda", "fft-cufft", [](const ConvOptions&) {
  return std::make_unique<FftConvolutionCuda>("fft-cufft", std::make_unique<CufftTransformFactory>());
});

}  // namespace
}  // namespace tunescope::cuda
