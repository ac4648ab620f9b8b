// Our CUDA FFT as a CudaFftTransform (see OwnFftCudaTransform.h).
#include "kernels/cuda/OwnFftCudaTransform.h"

#include <vector>

#include "core/base/AlignedBuffer.h"
#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaMemory.h"
#include "kernels/cuda/OwnFftCudaKernel.h"
#include "kernels/shared/FftLengths.h"

namespace tunescope::cuda {
namespace {

// Shared memory a block aims for: small planes go several to a block, and several
// blocks still fit one multiprocessor. Larger planes take one plane per block and opt in
// to more (up to the device's limit).
constexpr int64_t kSharedBytesTarget = 48 << 10;

class OwnFftCudaTransform final : public CudaFftTransform {
 public:
  explicit OwnFftCudaTransform(const CudaFftShape& shape)
      : geometry_(static_cast<int>(shape.rows), static_cast<int>(shape.cols)),
        forward_(fft::build_schedule(geometry_, -1)),
        inverse_(fft::build_schedule(geometry_, 1)),
        planes_per_block_(fft::planes_per_block(geometry_, kSharedBytesTarget)) {
    int device = 0;
    TS_CUDA_CHECK(cudaGetDevice(&device));
    const int64_t shared_bytes = fft::block_shared_bytes(geometry_, planes_per_block_);
    int optin = 0;
    TS_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (shared_bytes > optin)
      fail(ErrorKind::unsupported, "fft-own (cuda): a ", shape.rows, "x", shape.cols,
           " plane needs ", shared_bytes, " bytes of shared memory per block, device ", device,
           " allows ", optin);
    if (shared_bytes > kSharedBytesTarget)
      TS_CUDA_CHECK_CTX(
          allow_own_fft_shared_bytes(shared_bytes),
          cat("fft-own (cuda): opting in to ", shared_bytes, " bytes of shared memory"));
    // Twiddles of both lengths in one device buffer, computed on the host in double.
    std::vector<fft::Cf> twiddles = fft::make_twiddles(geometry_.cols);
    const std::vector<fft::Cf> columns = fft::make_twiddles(geometry_.rows);
    twiddles.insert(twiddles.end(), columns.begin(), columns.end());
    MemorySpace& memory = CudaMemory::of_device(device);
    twiddles_ = AlignedBuffer(twiddles.size() * sizeof(fft::Cf), memory);
    memory.copy_from_host(twiddles_.data(), twiddles.data(), twiddles_.bytes());
  }

  size_t work_bytes(int64_t) override { return 0; }  // everything stays in shared memory

  void forward(const float* real, float2* spectrum, int64_t count, void*,
               cudaStream_t stream) override {
    OwnFftLaunch launch = base(forward_, count);
    launch.real_in = real;
    launch.spectrum_out = reinterpret_cast<fft::Cf*>(spectrum);
    TS_CUDA_CHECK_CTX(launch_own_fft(launch, stream), "launching fft-own (cuda) r2c");
  }

  void inverse(float2* spectrum, float* real, int64_t count, void*, cudaStream_t stream) override {
    OwnFftLaunch launch = base(inverse_, count);
    launch.spectrum_in = reinterpret_cast<const fft::Cf*>(spectrum);
    launch.real_out = real;
    TS_CUDA_CHECK_CTX(launch_own_fft(launch, stream), "launching fft-own (cuda) c2r");
  }

 private:
  OwnFftLaunch base(const fft::FftSchedule& schedule, int64_t count) const {
    OwnFftLaunch launch;
    launch.schedule = schedule;
    launch.row_twiddles = static_cast<const fft::Cf*>(twiddles_.data());
    launch.col_twiddles = launch.row_twiddles + geometry_.cols;
    launch.count = count;
    launch.planes_per_block = planes_per_block_;
    return launch;
  }

  fft::Fft2dGeometry geometry_;
  fft::FftSchedule forward_, inverse_;
  int planes_per_block_;
  AlignedBuffer twiddles_;
};

}  // namespace

int64_t OwnFftCudaTransformFactory::good_size(int64_t n) const { return own_fft_good_size(n); }

std::string OwnFftCudaTransformFactory::shape_limit(const CudaFftShape& shape) const {
  if (shape.rows > fft::kMaxLength || shape.cols > fft::kMaxLength)
    return cat("fft-own (cuda) transforms at most ", fft::kMaxLength,
               " points a side (one block's shared memory); ", "this problem pads to ", shape.rows,
               "x", shape.cols);
  if (fft::build_schedule(
          fft::Fft2dGeometry(static_cast<int>(shape.rows), static_cast<int>(shape.cols)), -1)
          .count == 0)
    return cat("fft-own (cuda) has no radix 2/3/4/5 schedule for ", shape.rows, "x", shape.cols);
  return {};
}

std::unique_ptr<CudaFftTransform> OwnFftCudaTransformFactory::make(
    const CudaFftShape& shape) const {
  if (std::string limit = shape_limit(shape); !limit.empty()) fail(ErrorKind::unsupported, limit);
  return std::make_unique<OwnFftCudaTransform>(shape);
}

}  // namespace tunescope::cuda
