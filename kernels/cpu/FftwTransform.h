// FftTransform on FFTW (single precision): plans per batch count, cached per instance,
// executed with the new-array interface so threads can run one plan at once.
#pragma once

#include "kernels/cpu/FftTransform.h"

namespace tunescope::cpu {

class FftwTransformFactory final : public FftTransformFactory {
 public:
  // Products of 2, 3, 5 and 7, for which FFTW has fast codelets.
  int64_t good_size(int64_t n) const override;
  std::unique_ptr<FftTransform> make(const FftShape& shape) const override;
};

}  // namespace tunescope::cpu
