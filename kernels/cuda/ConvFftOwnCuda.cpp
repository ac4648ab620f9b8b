// The cuda backend's "fft-own" convolution: FftConvolutionCuda with our CUDA FFT kernel.
#include <memory>

#include "core/base/Registry.h"
#include "kernels/cuda/FftConvolutionCuda.h"
#include "kernels/cuda/OwnFftCudaTransform.h"
#include "kernels/shared/FftWorkspace.h"

namespace tunescope::cuda {
namespace {

const ConvAlgorithmRegistration registration("cuda", "fft-own", [](const KnobValues& knobs) {
  return std::make_unique<FftConvolutionCuda>("fft-own",
                                              std::make_unique<OwnFftCudaTransformFactory>(),
                                              FftConvolutionCuda::kDefaultChunkBudgetBytes,
                                              fft_workspace_knob.get(knobs) == FftWorkspace::cache);
});

}  // namespace
}  // namespace tunescope::cuda
