// cuFFT as a CudaFftTransform (see CufftTransform.h).
#include "kernels/cuda/CufftTransform.h"

#include <cufft.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/shared/FftLengths.h"

namespace tunescope::cuda {
namespace {

// A cuFFT plan handle, destroyed with its owner.
class CufftPlan {
 public:
  CufftPlan() { TS_CUDA_CHECK(cufftCreate(&handle_)); }
  ~CufftPlan() { cufftDestroy(handle_); }  // teardown: nothing to report a failure to
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;
  cufftHandle get() const { return handle_; }

 private:
  cufftHandle handle_ = 0;
};

// The r2c and c2r plans of one plane count, without their own work area.
struct PlanPair {
  CufftPlan forward, inverse;
  size_t work_bytes = 0;
};

class CufftTransform final : public CudaFftTransform {
 public:
  explicit CufftTransform(const CudaFftShape& shape) : shape_(shape) {}

  size_t work_bytes(int64_t count) override { return plans(count, nullptr).work_bytes; }

  void forward(const float* real, float2* spectrum, int64_t count, void* work,
               cudaStream_t stream) override {
    const PlanPair& p = plans(count, stream);
    prepare(p.forward.get(), work, stream);
    // cuFFT's r2c takes a non-const input it does not write.
    TS_CUDA_CHECK_CTX(cufftExecR2C(p.forward.get(), const_cast<float*>(real), spectrum),
                      context("r2c", count));
  }

  void inverse(float2* spectrum, float* real, int64_t count, void* work,
               cudaStream_t stream) override {
    const PlanPair& p = plans(count, stream);
    prepare(p.inverse.get(), work, stream);
    TS_CUDA_CHECK_CTX(cufftExecC2R(p.inverse.get(), spectrum, real), context("c2r", count));
  }

 private:
  std::string context(const char* what, int64_t count) const {
    return cat("fft-cufft ", what, " of ", count, " planes of ", shape_.rows, "x", shape_.cols);
  }

  void prepare(cufftHandle plan, void* work, cudaStream_t stream) const {
    TS_CUDA_CHECK(cufftSetStream(plan, stream));
    TS_CUDA_CHECK(cufftSetWorkArea(plan, work));
  }

  // The plans of (count, stream): a plan carries its stream and work area, so lanes
  // running concurrently each get their own.
  const PlanPair& plans(int64_t count, cudaStream_t stream) {
    std::lock_guard lock(mutex_);
    std::unique_ptr<PlanPair>& slot = plans_[{count, stream}];
    if (!slot) {
      try {
        slot = make_plans(count);
      } catch (...) {
        plans_.erase({count, stream});
        throw;
      }
    }
    return *slot;
  }

  std::unique_ptr<PlanPair> make_plans(int64_t count) const {
    long long n[2] = {shape_.rows, shape_.cols};
    long long real_embed[2] = {shape_.rows, shape_.cols};
    long long spectrum_embed[2] = {shape_.rows, shape_.cols / 2 + 1};
    const long long points = shape_.points();
    auto p = std::make_unique<PlanPair>();
    size_t forward_work = 0, inverse_work = 0;
    TS_CUDA_CHECK(cufftSetAutoAllocation(p->forward.get(), 0));
    TS_CUDA_CHECK(cufftSetAutoAllocation(p->inverse.get(), 0));
    // Real planes packed (distance rows * cols, element stride 1); spectra frequency-major
    // (element stride count, distance 1 between planes).
    TS_CUDA_CHECK_CTX(
        cufftMakePlanMany64(p->forward.get(), 2, n, real_embed, 1, points, spectrum_embed, count, 1,
                            CUFFT_R2C, count, &forward_work),
        context("planning r2c", count));
    TS_CUDA_CHECK_CTX(cufftMakePlanMany64(p->inverse.get(), 2, n, spectrum_embed, count, 1,
                                          real_embed, 1, points, CUFFT_C2R, count, &inverse_work),
                      context("planning c2r", count));
    p->work_bytes = std::max(forward_work, inverse_work);
    return p;
  }

  const CudaFftShape shape_;
  std::mutex mutex_;
  std::map<std::pair<int64_t, cudaStream_t>, std::unique_ptr<PlanPair>> plans_;
};

}  // namespace

// At least 2: a side of 1 (a 1x1 input with a 1x1 filter) is padded rather than handed to
// cuFFT as a degenerate 2-D plan; a larger transform is always a valid convolution frame.
int64_t CufftTransformFactory::good_size(int64_t n) const {
  return smooth_2357_size(std::max<int64_t>(n, 2));
}

std::unique_ptr<CudaFftTransform> CufftTransformFactory::make(const CudaFftShape& shape) const {
  return std::make_unique<CufftTransform>(shape);
}

}  // namespace tunescope::cuda
