// FftTransform on FFTW: see FftwTransform.h. FFTW's planner is not thread-safe, so
// every plan creation and destruction in the process takes one global mutex; execution
// with fftwf_execute_dft_r2c / _c2r on new arrays is thread-safe.
#include "kernels/cpu/FftwTransform.h"

#include <fftw3.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "core/base/Error.h"
#include "kernels/shared/FftLengths.h"

namespace tunescope::cpu {
namespace {

std::mutex& planner_mutex() {
  static std::mutex mutex;
  return mutex;
}

class FftwTransform final : public FftTransform {
 public:
  explicit FftwTransform(const FftShape& shape) : shape_(shape) {}
  ~FftwTransform() override {
    std::lock_guard lock(planner_mutex());
    for (auto& [count, plans] : plans_) {
      fftwf_destroy_plan(plans.r2c);
      fftwf_destroy_plan(plans.c2r);
    }
  }

  void forward(const float* real, std::complex<float>* spectrum, int64_t count) override {
    fftwf_execute_dft_r2c(plans_for(count).r2c, const_cast<float*>(real),
                          reinterpret_cast<fftwf_complex*>(spectrum));
  }
  void inverse(std::complex<float>* spectrum, float* real, int64_t count) override {
    fftwf_execute_dft_c2r(plans_for(count).c2r, reinterpret_cast<fftwf_complex*>(spectrum), real);
  }

 private:
  struct Plans {
    fftwf_plan r2c = nullptr, c2r = nullptr;
  };

  // Plans for `count` planes per execution; callers use few distinct counts (a full
  // block and a remainder), so the cache stays small.
  const Plans& plans_for(int64_t count) {
    std::lock_guard lock(mutex_);
    if (auto it = plans_.find(count); it != plans_.end()) return it->second;
    std::lock_guard planner(planner_mutex());
    const int n[2] = {static_cast<int>(shape_.rows), static_cast<int>(shape_.cols)};
    const int howmany = static_cast<int>(count);
    // Planning arrays from fftwf_malloc are SIMD-aligned like every plane we execute on,
    // and span what the strides address.
    const int64_t real_span = (count - 1) * shape_.real_stride +
                              (shape_.rows * shape_.cols - 1) * shape_.real_element_stride + 1;
    float* real = fftwf_alloc_real(static_cast<size_t>(real_span));
    fftwf_complex* spectrum =
        fftwf_alloc_complex(static_cast<size_t>(count * shape_.complex_stride));
    if (!real || !spectrum) {
      fftwf_free(real);
      fftwf_free(spectrum);
      fail(ErrorKind::runtime, "fftw: cannot allocate planning arrays for ", count, " planes of ",
           shape_.rows, "x", shape_.cols);
    }
    Plans plans;
    const int element = static_cast<int>(shape_.real_element_stride);
    plans.r2c = fftwf_plan_many_dft_r2c(2, n, howmany, real, nullptr, element,
                                        static_cast<int>(shape_.real_stride), spectrum, nullptr, 1,
                                        static_cast<int>(shape_.complex_stride), FFTW_ESTIMATE);
    plans.c2r = fftwf_plan_many_dft_c2r(
        2, n, howmany, spectrum, nullptr, 1, static_cast<int>(shape_.complex_stride), real, nullptr,
        element, static_cast<int>(shape_.real_stride), FFTW_ESTIMATE);
    fftwf_free(real);
    fftwf_free(spectrum);
    if (!plans.r2c || !plans.c2r) {
      if (plans.r2c) fftwf_destroy_plan(plans.r2c);
      if (plans.c2r) fftwf_destroy_plan(plans.c2r);
      fail(ErrorKind::runtime, "fftw: no plan for ", count, " planes of ", shape_.rows, "x",
           shape_.cols);
    }
    return plans_.emplace(count, plans).first->second;
  }

  const FftShape shape_;
  std::mutex mutex_;  // guards plans_
  std::map<int64_t, Plans> plans_;
};

}  // namespace

int64_t FftwTransformFactory::good_size(int64_t n) const { return smooth_2357_size(n); }

std::unique_ptr<FftTransform> FftwTransformFactory::make(const FftShape& shape) const {
  return std::make_unique<FftwTransform>(shape);
}

}  // namespace tunescope::cpu
