// Per-channel device kernels: the bias gradient and batch norm. A reduction runs in
// three steps, all on the stream: partial sums per (split, channel) in double (one
// block each, threads combined by a fixed tree), one thread per channel adding its
// partials in split order and finishing the op's per-channel values, then an
// elementwise pass. The summation order depends on the shape alone (LaunchGeometry.h).
// The statistics and affine maps are those of kernels/cpu/BatchNormCpu.cpp.
#include <cmath>

#include "kernels/cuda/DeviceLoops.cuh"

namespace tunescope::cuda {

namespace {

constexpr int kRowThreads = 8;       // NHWC: rows one block walks at once
constexpr int kChannelThreads = 32;  // NHWC: channels of one block (a warp reads them coalesced)

ChannelSplit split_of(const DeviceShape& s) {
  return s.nhwc ? channel_split(s.n * s.plane(), 1) : channel_split(s.n, s.plane());
}

// NCHW partial sums: block (c, split) walks the H*W planes of its images of channel c.
template <int K, typename Term>
__global__ void partials_nchw(DeviceShape s, ChannelSplit split, Term term, double* partials) {
  __shared__ double shared[K][kBlockThreads];
  const int64_t c = blockIdx.x, part = blockIdx.y, plane = s.plane();
  const int64_t first = part * split.per_split;
  const int64_t last = first + split.per_split < s.n ? first + split.per_split : s.n;
  double acc[K] = {};
  for (int64_t n = first; n < last; ++n) {
    const int64_t base = (n * s.c + c) * plane;
    for (int64_t p = threadIdx.x; p < plane; p += blockDim.x) term(base + p, c, acc);
  }
  for (int k = 0; k < K; ++k) shared[k][threadIdx.x] = acc[k];
  __syncthreads();
  for (int width = kBlockThreads / 2; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width)
      for (int k = 0; k < K; ++k) shared[k][threadIdx.x] += shared[k][threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    for (int k = 0; k < K; ++k) partials[(part * s.c + c) * K + k] = shared[k][0];
}

// NHWC partial sums: block (channel group, split) walks its rows, a warp reading 32
// neighbouring channels of a row.
template <int K, typename Term>
__global__ void partials_nhwc(DeviceShape s, ChannelSplit split, Term term, double* partials) {
  __shared__ double shared[K][kRowThreads][kChannelThreads];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kChannelThreads + threadIdx.x,
                part = blockIdx.y;
  const int64_t rows = s.n * s.plane();
  const int64_t first = part * split.per_split;
  const int64_t last = first + split.per_split < rows ? first + split.per_split : rows;
  double acc[K] = {};
  if (c < s.c)
    for (int64_t r = first + threadIdx.y; r < last; r += kRowThreads) term(r * s.c + c, c, acc);
  for (int k = 0; k < K; ++k) shared[k][threadIdx.y][threadIdx.x] = acc[k];
  __syncthreads();
  if (threadIdx.y == 0 && c < s.c)
    for (int k = 0; k < K; ++k) {
      double sum = 0;
      for (int r = 0; r < kRowThreads; ++r) sum += shared[k][r][threadIdx.x];
      partials[(part * s.c + c) * K + k] = sum;
    }
}

// One thread per channel: sums of its partials in split order, handed to finish(c, sums).
template <int K, typename Finish>
__global__ void finish_channels(DeviceShape s, int64_t splits, const double* partials,
                                Finish finish) {
  for (int64_t c = grid_first(); c < s.c; c += grid_step()) {
    double sums[K] = {};
    for (int64_t part = 0; part < splits; ++part)
      for (int k = 0; k < K; ++k) sums[k] += partials[(part * s.c + c) * K + k];
    finish(c, sums);
  }
}

template <int K, typename Term, typename Finish>
cudaError_t reduce_channels(DeviceShape s, Term term, double* partials, Finish finish,
                            cudaStream_t stream) {
  const ChannelSplit split = split_of(s);
  if (s.nhwc) {
    const dim3 grid(static_cast<unsigned>((s.c + kChannelThreads - 1) / kChannelThreads),
                    static_cast<unsigned>(split.splits));
    partials_nhwc<K>
        <<<grid, dim3(kChannelThreads, kRowThreads), 0, stream>>>(s, split, term, partials);
  } else {
    const dim3 grid(static_cast<unsigned>(s.c), static_cast<unsigned>(split.splits));
    partials_nchw<K><<<grid, kBlockThreads, 0, stream>>>(s, split, term, partials);
  }
  if (const cudaError_t status = cudaGetLastError(); status != cudaSuccess) return status;
  const Grid1d grid = grid_for(s.c);
  finish_channels<K><<<grid.blocks, grid.threads, 0, stream>>>(s, split.splits, partials, finish);
  return cudaGetLastError();
}

struct ValueTerm {
  const float* x;
  __device__ void operator()(int64_t i, int64_t, double* acc) const { acc[0] += x[i]; }
};

// Sum and sum of squares (the square in float, as on the CPU).
struct MomentsTerm {
  const float* x;
  __device__ void operator()(int64_t i, int64_t, double* acc) const {
    const float v = x[i];
    acc[0] += v;
    acc[1] += v * v;
  }
};

// dbeta and dgamma terms: dy and dy * x_hat.
struct BackwardTerm {
  const float* x;
  const float* dy;
  const float* mean;
  const float* inv_std;
  __device__ void operator()(int64_t i, int64_t c, double* acc) const {
    const float g = dy[i];
    acc[0] += g;
    acc[1] += g * (x[i] - mean[c]) * inv_std[c];
  }
};

struct StoreSums {
  float* out;
  __device__ void operator()(int64_t c, const double* sums) const {
    out[c] = static_cast<float>(sums[0]);
  }
};

struct FinishTrainingStatistics {
  BatchNormTrainArgs args;
  double count;
  __device__ void operator()(int64_t c, const double* sums) const {
    const double m = args.momentum;
    // Bessel's correction for the running estimate; a single value per channel has none.
    const double unbias = count > 1 ? count / (count - 1.0) : 1.0;
    const double mean = sums[0] / count;
    const double var = fmax(0.0, sums[1] / count - mean * mean);
    const double inv_std = 1.0 / sqrt(var + args.epsilon);
    args.saved_mean[c] = static_cast<float>(mean);
    args.saved_inv_std[c] = static_cast<float>(inv_std);
    args.running_mean[c] = static_cast<float>((1.0 - m) * args.running_mean[c] + m * mean);
    args.running_var[c] = static_cast<float>((1.0 - m) * args.running_var[c] + m * var * unbias);
    args.scale[c] = static_cast<float>(args.gamma[c] * inv_std);
  }
};

// dx = a[c] * dy + b[c] * (x - mean[c]) + d[c], coefficients stored as a, b, d.
struct FinishBackward {
  BatchNormBackwardArgs args;
  int64_t channels;
  double count;
  __device__ void operator()(int64_t c, const double* sums) const {
    args.dbeta[c] = static_cast<float>(sums[0]);
    args.dgamma[c] = static_cast<float>(sums[1]);
    const double k = static_cast<double>(args.gamma[c]) * args.inv_std[c];
    args.coefficients[c] = static_cast<float>(k);
    args.coefficients[channels + c] = static_cast<float>(-k * args.inv_std[c] * sums[1] / count);
    args.coefficients[2 * channels + c] = static_cast<float>(-k * sums[0] / count);
  }
};

// y = (x - center[c]) * scale[c] + offset[c]; y may alias x.
__global__ void affine_kernel(const float* x, const float* center, const float* scale,
                              const float* offset, float* y, DeviceShape s) {
  for (int64_t i = grid_first(); i < s.count(); i += grid_step()) {
    const int64_t c = channel_of(i, s);
    y[i] = (x[i] - center[c]) * scale[c] + offset[c];
  }
}

__global__ void inference_scale_kernel(const float* gamma, const float* running_var, float epsilon,
                                       float* scale, int64_t channels) {
  for (int64_t c = grid_first(); c < channels; c += grid_step())
    scale[c] = static_cast<float>(gamma[c] / sqrt(static_cast<double>(running_var[c]) + epsilon));
}

__global__ void backward_apply_kernel(const float* x, const float* dy, const float* mean,
                                      const float* coefficients, float* dx, DeviceShape s) {
  const float* a = coefficients;
  const float* b = coefficients + s.c;
  const float* d = coefficients + 2 * s.c;
  for (int64_t i = grid_first(); i < s.count(); i += grid_step()) {
    const int64_t c = channel_of(i, s);
    dx[i] = a[c] * dy[i] + b[c] * (x[i] - mean[c]) + d[c];
  }
}

// One value per plane is stored alike in both layouts; the row form reads it coalesced.
DeviceShape reduction_shape(DeviceShape s) {
  if (s.plane() == 1) s.nhwc = true;
  return s;
}

}  // namespace

size_t channel_partials_bytes(DeviceShape shape, int quantities) {
  return static_cast<size_t>(split_of(reduction_shape(shape)).splits * shape.c * quantities) *
         sizeof(double);
}

cudaError_t launch_channel_sums(const float* x, DeviceShape shape, double* partials, float* out,
                                cudaStream_t stream) {
  if (shape.count() == 0) return cudaSuccess;
  return reduce_channels<1>(reduction_shape(shape), ValueTerm{x}, partials, StoreSums{out}, stream);
}

cudaError_t launch_batchnorm_forward_train(const BatchNormTrainArgs& args, DeviceShape shape,
                                           cudaStream_t stream) {
  if (shape.count() == 0) return cudaSuccess;
  const double count = static_cast<double>(shape.n * shape.plane());
  const cudaError_t status =
      reduce_channels<2>(reduction_shape(shape), MomentsTerm{args.x}, args.partials,
                         FinishTrainingStatistics{args, count}, stream);
  if (status != cudaSuccess) return status;
  return launch_over(shape.count(), stream, affine_kernel, args.x,
                     static_cast<const float*>(args.saved_mean),
                     static_cast<const float*>(args.scale), args.beta, args.y, shape);
}

cudaError_t launch_batchnorm_forward_infer(const float* x, const float* gamma, const float* beta,
                                           const float* running_mean, const float* running_var,
                                           float epsilon, float* y, float* scale, DeviceShape shape,
                                           cudaStream_t stream) {
  if (shape.count() == 0) return cudaSuccess;
  const cudaError_t status = launch_over(shape.c, stream, inference_scale_kernel, gamma,
                                         running_var, epsilon, scale, shape.c);
  if (status != cudaSuccess) return status;
  return launch_over(shape.count(), stream, affine_kernel, x, running_mean,
                     static_cast<const float*>(scale), beta, y, shape);
}

cudaError_t launch_batchnorm_backward(const BatchNormBackwardArgs& args, DeviceShape shape,
                                      cudaStream_t stream) {
  if (shape.count() == 0) return cudaSuccess;
  const double count = static_cast<double>(shape.n * shape.plane());
  const cudaError_t status = reduce_channels<2>(
      reduction_shape(shape), BackwardTerm{args.x, args.dy, args.mean, args.inv_std}, args.partials,
      FinishBackward{args, shape.c, count}, stream);
  if (status != cudaSuccess) return status;
  return launch_over(shape.count(), stream, backward_apply_kernel, args.x, args.dy, args.mean,
                     static_cast<const float*>(args.coefficients), args.dx, shape);
}

}  // namespace tunescope::cuda
