// CudaFftTransform on our own CUDA FFT kernel (OwnFftCudaKernel.h): the transform of the
// cuda backend's `fft-own`. Lengths are those of the CPU fft-own (1, or even 2^a 3^b 5^c),
// up to fft::kMaxLength per side, so that one plane's two shared-memory buffers fit a block.
#pragma once

#include "kernels/cuda/CudaFftTransform.h"

namespace tunescope::cuda {

class OwnFftCudaTransformFactory final : public CudaFftTransformFactory {
 public:
  int64_t good_size(int64_t n) const override;
  std::string shape_limit(const CudaFftShape& shape) const override;
  std::unique_ptr<CudaFftTransform> make(const CudaFftShape& shape) const override;
};

}  // namespace tunescope::cuda
