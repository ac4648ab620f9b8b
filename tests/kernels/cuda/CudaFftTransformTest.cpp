// The two CudaFftTransforms on the device: our kernel (OwnFftCudaTransform) and cuFFT
// (CufftTransform), r2c and c2r of 37 planes (several blocks, a partial last block) for
// every size the schedule test covers that the transform is asked for (its good sizes),
// in the frequency-major layout, against FFTW on the host. Skips without a device.
//
// Stated error bounds, max |got - FFTW| / max |FFTW|, per log2(rows * cols):
//   fft-own: 2e-7, the bound of the host emulation (FftTestSupport.h); the device runs
//     the same arithmetic, where nvcc may fuse multiply-adds (rounding once, not twice);
//   cuFFT: 1e-6. NVIDIA states no bound; a float FFT's error grows with log2 of the
//     size like ours, with margin for cuFFT's own twiddles and order.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "CudaTestSupport.h"
#include "FftTestSupport.h"
#include "core/base/AlignedBuffer.h"
#include "kernels/cuda/CudaMemory.h"
#include "kernels/cuda/CufftTransform.h"
#include "kernels/cuda/OwnFftCudaTransform.h"

namespace tunescope::cuda {
namespace {

using namespace fft_test;

constexpr int kPlanes = 37;

struct Named {
  const char* name;
  double tolerance_per_log2;
  std::unique_ptr<CudaFftTransformFactory> (*factory)();
};

const Named kTransforms[] = {
    {"fft-own", 2e-7,
     [] { return std::unique_ptr<CudaFftTransformFactory>(new OwnFftCudaTransformFactory); }},
    {"cufft", 1e-6,
     [] { return std::unique_ptr<CudaFftTransformFactory>(new CufftTransformFactory); }},
};

class CudaFftTransformDevice : public ::testing::TestWithParam<Size2d> {};

TEST_P(CudaFftTransformDevice, ForwardAndInverseMatchFftw) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  const auto [rows, cols] = GetParam();
  const int points = rows * cols, bins = rows * (cols / 2 + 1);
  const double log2_points = std::max(1.0, std::log2(points));
  const std::vector<float> real =
      random_reals(static_cast<size_t>(points) * kPlanes, static_cast<unsigned>(rows + 7 * cols));
  const std::vector<Cf> reference = fftw_forward(rows, cols, kPlanes, real);
  const std::vector<float> reference_back = fftw_inverse(rows, cols, kPlanes, reference);

  MemorySpace& memory = CudaMemory::of_device(0);
  AlignedBuffer d_real(real.size() * sizeof(float), memory);
  AlignedBuffer d_spectrum(reference.size() * sizeof(Cf), memory);
  for (const Named& t : kTransforms) {
    const auto factory = t.factory();
    // Only the sizes a convolution would hand this transform (cuFFT's start at 2).
    if (factory->good_size(rows) != rows || factory->good_size(cols) != cols) continue;
    const auto transform = factory->make({rows, cols});
    AlignedBuffer work(std::max<size_t>(transform->work_bytes(kPlanes), 1), memory);
    memory.copy_from_host(d_real.data(), real.data(), d_real.bytes());
    transform->forward(static_cast<const float*>(d_real.data()),
                       static_cast<float2*>(d_spectrum.data()), kPlanes, work.data(), nullptr);
    std::vector<Cf> spectrum(reference.size());
    memory.copy_to_host(spectrum.data(), d_spectrum.data(), d_spectrum.bytes());
    const double forward_error = spectrum_error(spectrum, reference) / log2_points;

    memory.copy_from_host(d_spectrum.data(), reference.data(), d_spectrum.bytes());
    transform->inverse(static_cast<float2*>(d_spectrum.data()), static_cast<float*>(d_real.data()),
                       kPlanes, work.data(), nullptr);
    std::vector<float> back(real.size());
    memory.copy_to_host(back.data(), d_real.data(), d_real.bytes());
    const double inverse_error = real_error(back, reference_back, 1.0) / log2_points;
    std::printf("%-8s %dx%d x %d planes (%d bins): per log2 r2c %.2e c2r %.2e\n", t.name, rows,
                cols, kPlanes, bins, forward_error, inverse_error);
    EXPECT_LE(forward_error, t.tolerance_per_log2) << t.name << " r2c";
    EXPECT_LE(inverse_error, t.tolerance_per_log2) << t.name << " c2r";
  }
}

INSTANTIATE_TEST_SUITE_P(EverySize, CudaFftTransformDevice, ::testing::ValuesIn(all_sizes()),
                         [](const ::testing::TestParamInfo<Size2d>& info) {
                           return std::to_string(info.param.rows) + "x" +
                                  std::to_string(info.param.cols);
                         });

}  // namespace
}  // namespace tunescope::cuda
