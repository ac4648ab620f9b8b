// CudaFftTransform on cuFFT: batched 2-D r2c / c2r plans (cufftMakePlanMany64 with the
// advanced layout, so cuFFT writes and reads the frequency-major spectra directly). One
// pair of plans per (plane count, stream), made on first use and kept; each call sets
// its stream and its work area in the caller's workspace (auto-allocation is off, so
// the conv workspace_bytes() counts cuFFT's scratch too).
#pragma once

#include "kernels/cuda/CudaFftTransform.h"

namespace tunescope::cuda {

class CufftTransformFactory final : public CudaFftTransformFactory {
 public:
  // Products of 2, 3, 5 and 7 from 2 on, cuFFT's fast radices (the same as FFTW's).
  int64_t good_size(int64_t n) const override;
  std::string shape_limit(const CudaFftShape&) const override { return {}; }
  std::unique_ptr<CudaFftTransform> make(const CudaFftShape& shape) const override;
};

}  // namespace tunescope::cuda
