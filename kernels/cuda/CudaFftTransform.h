// The one part of CUDA FFT convolution that depends on the FFT: batched 2-D r2c and c2r
// transforms of one size on a stream. FftConvolutionCuda owns all convolution logic;
// `fft-cufft` plugs in cuFFT here (CufftTransform.h), `fft-own` our kernels
// (OwnFftCudaTransform.h). The CUDA twin of kernels/cpu/FftTransform.h.
//
// Data layout, in device memory:
//  - real planes of rows x cols floats, row-major, packed: plane p at real + p * rows * cols;
//  - spectra frequency-major: bin f (row-major over rows x (cols / 2 + 1)) of plane p at
//    spectrum[f * count + p], so that for each bin the planes of one image (or filter) are
//    a dense matrix and the channel sums are one strided batched complex GEMM.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tunescope::cuda {

struct CudaFftShape {
  int64_t rows = 1, cols = 1;

  int64_t bins() const { return rows * (cols / 2 + 1); }
  int64_t points() const { return rows * cols; }
};

class CudaFftTransform {
 public:
  virtual ~CudaFftTransform() = default;
  // Device scratch one call on `count` planes needs, taken from the caller's workspace.
  virtual size_t work_bytes(int64_t count) = 0;
  // Unnormalised r2c of `count` planes, enqueued on `stream`; `work` holds work_bytes(count).
  virtual void forward(const float* real, float2* spectrum, int64_t count, void* work,
                       cudaStream_t stream) = 0;
  // Unnormalised c2r (rows * cols times the signal); may overwrite `spectrum`.
  virtual void inverse(float2* spectrum, float* real, int64_t count, void* work,
                       cudaStream_t stream) = 0;
};

class CudaFftTransformFactory {
 public:
  virtual ~CudaFftTransformFactory() = default;
  // The smallest length >= n this transform handles efficiently.
  virtual int64_t good_size(int64_t n) const = 0;
  // Why shape cannot be transformed whatever the device (empty when it can).
  virtual std::string shape_limit(const CudaFftShape& shape) const = 0;
  // Needs a device; throws Error(unsupported) when this device cannot run the shape.
  virtual std::unique_ptr<CudaFftTransform> make(const CudaFftShape& shape) const = 0;
};

}  // namespace tunescope::cuda
