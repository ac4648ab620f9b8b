// The cuda backend's "fft-cufft" convolution: FftConvolutionCuda with cuFFT transforms.
#include <memory>

#include "core/base/Registry.h"
#include "kernels/cuda/CufftTransform.h"
#include "kernels/cuda/FftConvolutionCuda.h"
#include "kernels/shared/FftWorkspace.h"

namespace tunescope::cuda {
namespace {

const ConvAlgorithmRegistration registration("cuda", "fft-cufft", [](const KnobValues& knobs) {
  return std::make_unique<FftConvolutionCuda>("fft-cufft",
                                              std::make_unique<CufftTransformFactory>(),
                                              FftConvolutionCuda::kDefaultChunkBudgetBytes,
                                              fft_workspace_knob.get(knobs) == FftWorkspace::cache);
});

}  // namespace
}  // namespace tunescope::cuda
