// FftTransform on OwnFft2d: see OwnFftTransform.h. FftConvolution already spreads the
// planes over its thread pool in calls of a few planes, so each call runs serially.
#include "kernels/cpu/OwnFftTransform.h"

#include <algorithm>

#include "kernels/cpu/OwnFft.h"
#include "kernels/shared/FftLengths.h"

namespace tunescope::cpu {
namespace {

class OwnFftTransform final : public FftTransform {
 public:
  explicit OwnFftTransform(const FftShape& shape) : shape_(shape), fft_(shape.rows, shape.cols) {}

  void forward(const float* real, std::complex<float>* spectrum, int64_t count) override {
    fft_.forward(real, layout(), spectrum, shape_.complex_stride, count);
  }
  void inverse(std::complex<float>* spectrum, float* real, int64_t count) override {
    fft_.inverse(spectrum, shape_.complex_stride, real, layout(), count);
  }

 private:
  OwnFftRealLayout layout() const { return {shape_.real_stride, shape_.real_element_stride}; }

  const FftShape shape_;
  const OwnFft2d fft_;
};

}  // namespace

int64_t OwnFftTransformFactory::good_size(int64_t n) const { return own_fft_good_size(n); }

std::unique_ptr<FftTransform> OwnFftTransformFactory::make(const FftShape& shape) const {
  return std::make_unique<OwnFftTransform>(shape);
}

}  // namespace tunescope::cpu
