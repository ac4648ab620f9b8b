// The cuda backend's "fft-own" convolution: FftConvolutionCuda with our CUDA FFT kernel.
#include <memory>

#include "core/base/Registry.h"
#include "kernels/cuda/FftConvolutionCuda.h"
#include "kernels/cuda/OwnFftCudaTransform.h"

namespace tunescope::cuda {
namespace {

const ConvAlgorithmRegistration registration("cuda", "fft-own", [](const ConvOptions&) {
  return std::make_unique<FftConvolutionCuda>("fft-own", std::make_unique<OwnFftCudaTransformFactory>());
});

}  // namespace
}  // namespace tunescope::cuda
