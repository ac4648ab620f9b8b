// Pooling device kernels. Forward: one thread per output, folding its window rows then
// columns as the CPU kernels do. Backward gathers: one thread per input element adds
// the dy of every window covering it, in (oh, ow) order — the order in which the CPU
// kernels accumulate into that element — so no two threads write one element and no
// atomics are needed. Max pooling recomputes each covering window's arg-max (first
// maximum in scan order wins) and takes its dy only when the arg-max is this element.
#include <math_constants.h>

#include "kernels/cuda/DeviceLoops.cuh"

namespace tunescope::cuda {

namespace {

struct Span {
  int64_t begin, end;
};

struct Index4 {
  int64_t n, c, h, w;
};

__device__ Index4 logical_index(int64_t i, int64_t C, int64_t H, int64_t W, bool nhwc) {
  if (nhwc) return {i / (C * H * W), i % C, (i / (C * W)) % H, (i / C) % W};
  return {i / (C * H * W), (i / (H * W)) % C, (i / W) % H, i % W};
}

__device__ int64_t offset_of(int64_t n, int64_t c, int64_t h, int64_t w, int64_t C, int64_t H,
                             int64_t W, bool nhwc) {
  return nhwc ? ((n * H + h) * W + w) * C + c : ((n * C + c) * H + h) * W + w;
}

// Inputs under the window of output `o` along one axis, padding excluded.
__device__ Span window(int64_t o, int64_t stride, int64_t pad, int64_t kernel, int64_t size) {
  const int64_t start = o * stride - pad;
  return {start > 0 ? start : 0, start + kernel < size ? start + kernel : size};
}

// Outputs whose windows cover input `i` along one axis.
__device__ Span covering(int64_t i, int64_t stride, int64_t pad, int64_t kernel, int64_t outputs) {
  const int64_t first = i + pad - kernel + 1;
  const int64_t last = (i + pad) / stride + 1;
  return {first <= 0 ? 0 : (first + stride - 1) / stride, last < outputs ? last : outputs};
}

struct MaxFold {
  __device__ static float init() { return -CUDART_INF_F; }  // padding never wins
  __device__ float operator()(float acc, float v) const { return v > acc ? v : acc; }
};

struct SumFold {
  __device__ static float init() { return 0.0f; }
  __device__ float operator()(float acc, float v) const { return acc + v; }
};

template <typename Fold>
__global__ void pool_forward_kernel(const float* x, float* y, DeviceShape in, DevicePool p,
                                    float scale) {
  const int64_t outputs = in.n * in.c * p.out_h * p.out_w;
  for (int64_t i = grid_first(); i < outputs; i += grid_step()) {
    const Index4 o = logical_index(i, in.c, p.out_h, p.out_w, in.nhwc);
    const Span rows = window(o.h, p.stride_h, p.pad_h, p.kernel_h, in.h);
    const Span cols = window(o.w, p.stride_w, p.pad_w, p.kernel_w, in.w);
    float acc = Fold::init();
    for (int64_t h = rows.begin; h < rows.end; ++h)
      for (int64_t w = cols.begin; w < cols.end; ++w)
        acc = Fold()(acc, x[offset_of(o.n, o.c, h, w, in.c, in.h, in.w, in.nhwc)]);
    y[i] = scale != 1.0f ? acc * scale : acc;
  }
}

__global__ void maxpool_backward_kernel(const float* x, const float* dy, float* dx, DeviceShape in,
                                        DevicePool p) {
  for (int64_t i = grid_first(); i < in.count(); i += grid_step()) {
    const Index4 e = logical_index(i, in.c, in.h, in.w, in.nhwc);
    const Span out_rows = covering(e.h, p.stride_h, p.pad_h, p.kernel_h, p.out_h);
    const Span out_cols = covering(e.w, p.stride_w, p.pad_w, p.kernel_w, p.out_w);
    float acc = 0.0f;
    for (int64_t oh = out_rows.begin; oh < out_rows.end; ++oh)
      for (int64_t ow = out_cols.begin; ow < out_cols.end; ++ow) {
        const Span rows = window(oh, p.stride_h, p.pad_h, p.kernel_h, in.h);
        const Span cols = window(ow, p.stride_w, p.pad_w, p.kernel_w, in.w);
        int64_t best_h = rows.begin, best_w = cols.begin;
        float best = x[offset_of(e.n, e.c, best_h, best_w, in.c, in.h, in.w, in.nhwc)];
        for (int64_t h = rows.begin; h < rows.end; ++h)
          for (int64_t w = cols.begin; w < cols.end; ++w) {
            const float v = x[offset_of(e.n, e.c, h, w, in.c, in.h, in.w, in.nhwc)];
            if (v > best) {
              best = v;
              best_h = h;
              best_w = w;
            }
          }
        if (best_h == e.h && best_w == e.w)
          acc += dy[offset_of(e.n, e.c, oh, ow, in.c, p.out_h, p.out_w, in.nhwc)];
      }
    dx[i] = acc;
  }
}

__global__ void avgpool_backward_kernel(const float* dy, float* dx, DeviceShape in, DevicePool p,
                                        float inv_area) {
  for (int64_t i = grid_first(); i < in.count(); i += grid_step()) {
    const Index4 e = logical_index(i, in.c, in.h, in.w, in.nhwc);
    const Span out_rows = covering(e.h, p.stride_h, p.pad_h, p.kernel_h, p.out_h);
    const Span out_cols = covering(e.w, p.stride_w, p.pad_w, p.kernel_w, p.out_w);
    float acc = 0.0f;
    for (int64_t oh = out_rows.begin; oh < out_rows.end; ++oh)
      for (int64_t ow = out_cols.begin; ow < out_cols.end; ++ow)
        acc += dy[offset_of(e.n, e.c, oh, ow, in.c, p.out_h, p.out_w, in.nhwc)];
    dx[i] = acc * inv_area;
  }
}

// NCHW: one warp per (n, c) plane, lanes striding over it, combined by shuffles.
__global__ void global_avgpool_planes_kernel(const float* x, float* y, DeviceShape in) {
  constexpr int kWarp = 32;
  const int64_t planes = in.n * in.c, plane = in.plane();
  const unsigned lane = threadIdx.x % kWarp;
  for (int64_t p = grid_first() / kWarp; p < planes; p += grid_step() / kWarp) {
    double sum = 0;
    for (int64_t j = lane; j < plane; j += kWarp) sum += x[p * plane + j];
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0) y[p] = static_cast<float>(sum / static_cast<double>(plane));
  }
}

// NHWC: one thread per (n, c); neighbouring threads read neighbouring channels.
__global__ void global_avgpool_rows_kernel(const float* x, float* y, DeviceShape in) {
  const int64_t plane = in.plane();
  for (int64_t i = grid_first(); i < in.n * in.c; i += grid_step()) {
    const int64_t n = i / in.c, c = i % in.c;
    double sum = 0;
    for (int64_t p = 0; p < plane; ++p) sum += x[(n * plane + p) * in.c + c];
    y[i] = static_cast<float>(sum / static_cast<double>(plane));
  }
}

__global__ void global_avgpool_backward_kernel(const float* dy, float* dx, DeviceShape in,
                                               float inv_plane) {
  for (int64_t i = grid_first(); i < in.count(); i += grid_step()) {
    const int64_t n = in.nhwc ? i / (in.plane() * in.c) : i / (in.c * in.plane());
    dx[i] = dy[n * in.c + channel_of(i, in)] * inv_plane;
  }
}

int64_t outputs_of(const DeviceShape& in, const DevicePool& p) {
  return in.n * in.c * p.out_h * p.out_w;
}
float inverse_area(const DevicePool& p) {
  return 1.0f / static_cast<float>(p.kernel_h * p.kernel_w);
}

}  // namespace

cudaError_t launch_maxpool_forward(const float* x, float* y, DeviceShape in, DevicePool pool,
                                   cudaStream_t stream) {
  return launch_over(outputs_of(in, pool), stream, pool_forward_kernel<MaxFold>, x, y, in, pool,
                     1.0f);
}

cudaError_t launch_avgpool_forward(const float* x, float* y, DeviceShape in, DevicePool pool,
                                   cudaStream_t stream) {
  return launch_over(outputs_of(in, pool), stream, pool_forward_kernel<SumFold>, x, y, in, pool,
                     inverse_area(pool));
}

cudaError_t launch_maxpool_backward(const float* x, const float* dy, float* dx, DeviceShape in,
                                    DevicePool pool, cudaStream_t stream) {
  return launch_over(in.count(), stream, maxpool_backward_kernel, x, dy, dx, in, pool);
}

cudaError_t launch_avgpool_backward(const float* dy, float* dx, DeviceShape in, DevicePool pool,
                                    cudaStream_t stream) {
  return launch_over(in.count(), stream, avgpool_backward_kernel, dy, dx, in, pool,
                     inverse_area(pool));
}

cudaError_t launch_global_avgpool_forward(const float* x, float* y, DeviceShape in,
                                          cudaStream_t stream) {
  if (in.nhwc) return launch_over(in.n * in.c, stream, global_avgpool_rows_kernel, x, y, in);
  return launch_over(in.n * in.c * 32, stream, global_avgpool_planes_kernel, x, y, in);
}

cudaError_t launch_global_avgpool_backward(const float* dy, float* dx, DeviceShape in,
                                           cudaStream_t stream) {
  return launch_over(in.count(), stream, global_avgpool_backward_kernel, dy, dx, in,
                     1.0f / static_cast<float>(in.plane()));
}

}  // namespace tunescope::cuda
