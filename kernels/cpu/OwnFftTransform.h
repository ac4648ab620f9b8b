// FftTransform on tunescope's own FFT (OwnFft2d): the transform of `fft-own`.
#pragma once

#include "kernels/cpu/FftTransform.h"

namespace tunescope::cpu {

class OwnFftTransformFactory final : public FftTransformFactory {
 public:
  // The smallest length >= n that OwnFft2d transforms (1, or even 2^a 3^b 5^c). Lengths
  // beyond OwnFft2d::kMaxSize are returned unchanged, and make() then refuses them.
  int64_t good_size(int64_t n) const override;
  std::unique_ptr<FftTransform> make(const FftShape& shape) const override;
};

}  // namespace tunescope::cpu
