// Max, average and global average pooling on the CPU. NCHW loops work on one channel
// plane at a time, a row of outputs per window offset so the inner loop runs along a
// row; NHWC loops keep channels innermost so every window step is a contiguous channel
// vector. Both combine a window's inputs in the same order (rows, then columns), so
// the two layouts give bit-identical results. Max pooling over tiled windows (stride =
// kernel, no padding: LeNet-5's) runs on the vector kernels of PoolingKernels.h instead.
#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "core/base/Error.h"
#include "kernels/cpu/CpuOps.h"
#include "kernels/cpu/CpuOpsSupport.h"
#include "kernels/cpu/ElementwiseIsa.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu {

using namespace ops;

namespace {

// Channels one NHWC max-pool backward item owns: whole cache lines, so items never
// share a written line, and runs long enough (256 bytes) that the strided walk over
// the image still streams.
constexpr int64_t kChannelBlock = 64;
constexpr float kLowest = -std::numeric_limits<float>::infinity();

struct Span {
  int64_t begin, end;
};

struct PoolGeometry {
  Shape4 in, out;
  PoolParams p;

  // Input rows/columns under the window of output row/column `o`, padding excluded.
  Span rows(int64_t o) const { return clip(o * p.stride_h - p.pad_h, p.kernel_h, in.h); }
  Span cols(int64_t o) const { return clip(o * p.stride_w - p.pad_w, p.kernel_w, in.w); }
  // Output rows/columns whose windows cover input row/column `i`.
  Span rows_covering(int64_t i) const {
    return covering(i, p.stride_h, p.pad_h, p.kernel_h, out.h);
  }
  Span cols_covering(int64_t i) const {
    return covering(i, p.stride_w, p.pad_w, p.kernel_w, out.w);
  }
  int64_t window_size() const { return p.kernel_h * p.kernel_w; }
  float inv_area() const { return 1.0f / static_cast<float>(window_size()); }
  // For each kernel column kw, the output columns whose input column
  // ow * stride + kw - pad lies inside the tensor.
  std::vector<Span> output_cols_by_offset() const {
    std::vector<Span> spans(p.kernel_w);
    for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
      const int64_t low = p.pad_w - kw, high = in.w - 1 + p.pad_w - kw;
      const int64_t begin = low <= 0 ? 0 : ceil_div(low, p.stride_w);
      const int64_t end = high < 0 ? 0 : std::min(out.w, high / p.stride_w + 1);
      spans[kw] = {begin, std::max(begin, end)};
    }
    return spans;
  }
  int64_t input_col(int64_t ow, int64_t kw) const { return ow * p.stride_w + kw - p.pad_w; }

 private:
  static Span clip(int64_t start, int64_t kernel, int64_t size) {
    return {std::max<int64_t>(0, start), std::min(size, start + kernel)};
  }
  static Span covering(int64_t i, int64_t stride, int64_t pad, int64_t kernel, int64_t size) {
    const int64_t first = i + pad - kernel + 1;  // lowest window start that still covers i
    return {first <= 0 ? 0 : ceil_div(first, stride), std::min(size, (i + pad) / stride + 1)};
  }
};

// Validates the call (shared checks) and returns its geometry.
PoolGeometry checked_geometry(const char* op, const PoolParams& params, const Tensor& in,
                              const char* in_name, const Tensor& out, const char* out_name) {
  return {in.shape(), op_checks::check_pool(op, params, in, in_name, out, out_name), params};
}

double window_reads(const PoolGeometry& g) {
  return static_cast<double>(g.out.count()) * static_cast<double>(g.window_size());
}

// Pooling forward, one NCHW channel plane: y = init, then y = step(y, x) for every
// input of each window, rows then columns. Done a row of outputs at a time per kernel
// offset, so the inner loop walks along an input row.
template <typename Step>
void pool_forward_plane(const PoolGeometry& g, const std::vector<Span>& col_spans, float init,
                        const float* x, float* y, const Step& step) {
  for (int64_t oh = 0; oh < g.out.h; ++oh) {
    float* yrow = y + oh * g.out.w;
    std::fill_n(yrow, g.out.w, init);
    const Span r = g.rows(oh);
    for (int64_t h = r.begin; h < r.end; ++h) {
      const float* xrow = x + h * g.in.w;
      for (int64_t kw = 0; kw < g.p.kernel_w; ++kw)
        for (int64_t ow = col_spans[kw].begin; ow < col_spans[kw].end; ++ow)
          yrow[ow] = step(yrow[ow], xrow[g.input_col(ow, kw)]);
    }
  }
}

// The NHWC counterpart for one output pixel: whole channel vectors per window input.
template <typename Step>
void pool_forward_pixel(const PoolGeometry& g, int64_t n, int64_t oh, int64_t ow, float init,
                        const float* x, float* yp, const Step& step) {
  const int64_t C = g.in.c;
  std::fill_n(yp, C, init);
  const Span r = g.rows(oh), cl = g.cols(ow);
  for (int64_t h = r.begin; h < r.end; ++h)
    for (int64_t w = cl.begin; w < cl.end; ++w) {
      const float* xp = x + ((n * g.in.h + h) * g.in.w + w) * C;
      for (int64_t c = 0; c < C; ++c) yp[c] = step(yp[c], xp[c]);
    }
}

// Shared by max and average pooling: `init` and `step` fold a window, `scale`
// multiplies the result (1 for max).
template <typename Step>
void pool_forward(ThreadPool& pool, const PoolGeometry& g, Layout layout, const float* x, float* y,
                  float init, const Step& step, float scale) {
  const int64_t window = g.window_size();
  if (layout == Layout::NCHW) {
    const int64_t in_plane = g.in.h * g.in.w, out_plane = g.out.h * g.out.w;
    const std::vector<Span> col_spans = g.output_cols_by_offset();
    pool.parallel_for(
        g.in.n * g.in.c,
        [&](int64_t first, int64_t last) {
          for (int64_t p = first; p < last; ++p) {
            float* yp = y + p * out_plane;
            pool_forward_plane(g, col_spans, init, x + p * in_plane, yp, step);
            if (scale != 1.0f)
              for (int64_t i = 0; i < out_plane; ++i) yp[i] *= scale;
          }
        },
        grain_for(out_plane * window));
  } else {
    const int64_t C = g.in.c;
    pool.parallel_for(
        g.out.n * g.out.h,
        [&](int64_t first, int64_t last) {
          for (int64_t row = first; row < last; ++row)
            for (int64_t ow = 0; ow < g.out.w; ++ow) {
              float* yp = y + (row * g.out.w + ow) * C;
              pool_forward_pixel(g, row / g.out.h, row % g.out.h, ow, init, x, yp, step);
              if (scale != 1.0f)
                for (int64_t c = 0; c < C; ++c) yp[c] *= scale;
            }
        },
        grain_for(g.out.w * C * window));
  }
}

// Max pooling backward, one NCHW channel plane. Per output row, the arg-max of every
// window is found row-wise like the forward pass (strict > over rows then columns keeps
// the first maximum), then dy is scattered in output order.
void maxpool_backward_plane(const PoolGeometry& g, const std::vector<Span>& col_spans,
                            const float* x, const float* dy, float* dx, std::vector<float>& best,
                            std::vector<int64_t>& arg) {
  std::fill_n(dx, g.in.h * g.in.w, 0.0f);
  for (int64_t oh = 0; oh < g.out.h; ++oh) {
    const Span r = g.rows(oh);
    for (int64_t ow = 0; ow < g.out.w; ++ow) {
      arg[ow] = r.begin * g.in.w + g.cols(ow).begin;
      best[ow] = x[arg[ow]];
    }
    for (int64_t h = r.begin; h < r.end; ++h)
      for (int64_t kw = 0; kw < g.p.kernel_w; ++kw)
        for (int64_t ow = col_spans[kw].begin; ow < col_spans[kw].end; ++ow) {
          const int64_t i = h * g.in.w + g.input_col(ow, kw);
          if (x[i] > best[ow]) {
            best[ow] = x[i];
            arg[ow] = i;
          }
        }
    for (int64_t ow = 0; ow < g.out.w; ++ow) dx[arg[ow]] += dy[oh * g.out.w + ow];
  }
}

// Max pooling backward, NHWC image n, channels [c0, c1): arg-max per channel with
// branch-free vector compares over the window, then scatter. Only this item writes
// these channels of dx.
void maxpool_backward_block(const PoolGeometry& g, const float* x, const float* dy, float* dx,
                            int64_t n, int64_t c0, int64_t c1) {
  const int64_t C = g.in.c, width = c1 - c0;
  const int64_t in_base = n * g.in.h * g.in.w, out_base = n * g.out.h * g.out.w;
  for (int64_t pixel = 0; pixel < g.in.h * g.in.w; ++pixel)
    std::fill_n(dx + (in_base + pixel) * C + c0, width, 0.0f);
  std::array<float, kChannelBlock> best;
  std::array<int64_t, kChannelBlock> arg;
  for (int64_t oh = 0; oh < g.out.h; ++oh) {
    const Span r = g.rows(oh);
    for (int64_t ow = 0; ow < g.out.w; ++ow) {
      const Span cl = g.cols(ow);
      const int64_t first = in_base + r.begin * g.in.w + cl.begin;
      for (int64_t j = 0; j < width; ++j) {
        best[j] = x[first * C + c0 + j];
        arg[j] = first;
      }
      for (int64_t h = r.begin; h < r.end; ++h)
        for (int64_t w = cl.begin; w < cl.end; ++w) {
          const int64_t pixel = in_base + h * g.in.w + w;
          const float* xp = x + pixel * C + c0;
          for (int64_t j = 0; j < width; ++j) {
            const bool greater = xp[j] > best[j];
            best[j] = greater ? xp[j] : best[j];
            arg[j] = greater ? pixel : arg[j];
          }
        }
      const float* dyp = dy + (out_base + oh * g.out.w + ow) * C + c0;
      for (int64_t j = 0; j < width; ++j) dx[arg[j] * C + c0 + j] += dyp[j];
    }
  }
}

// Average pooling backward, one NCHW channel plane, scattered row-wise like the
// forward pass. Kernel columns run backwards so that each dx element receives its
// terms in (oh, ow) order, the order of the NHWC gather: both layouts agree bitwise.
void avgpool_backward_plane(const PoolGeometry& g, const std::vector<Span>& col_spans,
                            const float* dy, float* dx) {
  const int64_t in_plane = g.in.h * g.in.w;
  std::fill_n(dx, in_plane, 0.0f);
  for (int64_t oh = 0; oh < g.out.h; ++oh) {
    const float* dyrow = dy + oh * g.out.w;
    const Span r = g.rows(oh);
    for (int64_t h = r.begin; h < r.end; ++h) {
      float* dxrow = dx + h * g.in.w;
      for (int64_t kw = g.p.kernel_w - 1; kw >= 0; --kw)
        for (int64_t ow = col_spans[kw].begin; ow < col_spans[kw].end; ++ow)
          dxrow[g.input_col(ow, kw)] += dyrow[ow];
    }
  }
  const float inv_area = g.inv_area();
  for (int64_t i = 0; i < in_plane; ++i) dx[i] *= inv_area;
}

// Average pooling backward, NHWC image row (n, ih): gathered per input pixel from the
// windows covering it, so rows can be split across threads even when windows overlap.
void avgpool_backward_row(const PoolGeometry& g, int64_t n, int64_t ih, const float* dy,
                          float* dx) {
  const int64_t C = g.in.c;
  const float inv_area = g.inv_area();
  const Span r = g.rows_covering(ih);
  for (int64_t iw = 0; iw < g.in.w; ++iw) {
    const Span cl = g.cols_covering(iw);
    float* dxp = dx + ((n * g.in.h + ih) * g.in.w + iw) * C;
    std::fill_n(dxp, C, 0.0f);
    for (int64_t oh = r.begin; oh < r.end; ++oh)
      for (int64_t ow = cl.begin; ow < cl.end; ++ow) {
        const float* dyp = dy + ((n * g.out.h + oh) * g.out.w + ow) * C;
        for (int64_t c = 0; c < C; ++c) dxp[c] += dyp[c];
      }
    for (int64_t c = 0; c < C; ++c) dxp[c] *= inv_area;
  }
}

// Stride equal to the kernel and no padding: each input in at most one window.
bool tiled_windows(const PoolGeometry& g) {
  const PoolParams& p = g.p;
  return p.stride_h == p.kernel_h && p.stride_w == p.kernel_w && p.pad_h == 0 && p.pad_w == 0 &&
         g.out.h > 0 && g.out.w > 0;
}

// Items of a tiled max pool: one per plane (NCHW; the planar kernels run its window rows
// in one call) or per output row of an image (NHWC). The item that ends a plane or image
// also owns the input rows below the last window (backward zeroes them).
// f(plane_or_image, oh, rows, channel): window rows [oh, oh + rows) and the plane's
// channel (NCHW; 0 in NHWC). NHWC's indices are counted on from the chunk's first item: a
// division per item cost as much as a small row's work.
template <typename F>
void for_each_tiled_item(ThreadPool& pool, const PoolGeometry& g, Layout layout, const F& f) {
  const int64_t window = g.window_size();
  if (layout == Layout::NCHW) {
    const int64_t C = g.in.c;
    pool.parallel_for(
        g.in.n * C,
        [&](int64_t first, int64_t last) {
          for (int64_t plane = first, channel = first % C; plane < last; ++plane) {
            f(plane, int64_t{0}, g.out.h, channel);
            if (++channel == C) channel = 0;
          }
        },
        grain_for(g.out.h * g.out.w * window));
    return;
  }
  pool.parallel_for(
      g.in.n * g.out.h,
      [&](int64_t first, int64_t last) {
        int64_t image = first / g.out.h, oh = first % g.out.h;
        for (int64_t item = first; item < last; ++item) {
          f(image, oh, int64_t{1}, int64_t{0});
          if (++oh == g.out.h) {
            oh = 0;
            ++image;
          }
        }
      },
      grain_for(g.out.w * g.in.c * window));
}

void maxpool_forward_tiled(ThreadPool& pool, const PoolGeometry& g, Layout layout, const float* x,
                           float* y) {
  const PoolingKernelTable& k = pooling_kernels();
  const int64_t kh = g.p.kernel_h, kw = g.p.kernel_w;
  const int64_t channels = layout == Layout::NCHW ? 1 : g.in.c;
  const int64_t in_row = g.in.w * channels, out_row = g.out.w * channels;
  for_each_tiled_item(pool, g, layout, [&](int64_t outer, int64_t oh, int64_t rows, int64_t) {
    const float* xr = x + (outer * g.in.h + oh * kh) * in_row;
    float* yr = y + (outer * g.out.h + oh) * out_row;
    if (layout == Layout::NCHW)
      k.max_tiled_forward_planar(xr, g.in.w, kh, kw, yr, g.out.w, rows);
    else
      k.max_tiled_forward_pixels(xr, g.in.w, g.in.c, kh, kw, yr, g.out.w);
  });
}

// Zeroes dx's input rows below the last window of a plane (NCHW) or image (NHWC), on the
// item that ends it.
void zero_rows_below(const PoolGeometry& g, int64_t in_row, int64_t outer, int64_t oh, int64_t rows,
                     float* dx) {
  if (oh + rows != g.out.h) return;
  const int64_t below = (outer * g.in.h + g.out.h * g.p.kernel_h) * in_row;
  std::fill(dx + below, dx + (outer + 1) * g.in.h * in_row, 0.0f);
}

void maxpool_backward_tiled(ThreadPool& pool, const PoolGeometry& g, Layout layout, const float* x,
                            const float* dy, float* dx) {
  const PoolingKernelTable& k = pooling_kernels();
  const int64_t kh = g.p.kernel_h, kw = g.p.kernel_w;
  const int64_t channels = layout == Layout::NCHW ? 1 : g.in.c;
  const int64_t in_row = g.in.w * channels, out_row = g.out.w * channels;
  for_each_tiled_item(pool, g, layout, [&](int64_t outer, int64_t oh, int64_t rows, int64_t) {
    const int64_t at = (outer * g.in.h + oh * kh) * in_row;
    const float* dyr = dy + (outer * g.out.h + oh) * out_row;
    if (layout == Layout::NCHW)
      k.max_tiled_backward_planar(x + at, dyr, dx + at, g.in.w, kh, kw, g.out.w, rows);
    else
      k.max_tiled_backward_pixels(x + at, dyr, dx + at, g.in.w, g.in.c, kh, kw, g.out.w);
    zero_rows_below(g, in_row, outer, oh, rows, dx);
  });
}

// The biases as the fused kernels take them: one per plane (NCHW), or repeated along a
// run of pixels (NHWC, PoolingKernelTable.h).
std::vector<float> kernel_biases(const float* bias, int64_t channels, Layout layout) {
  if (layout == Layout::NCHW) return std::vector<float>(bias, bias + channels);
  std::vector<float> row(static_cast<size_t>(channels + kPoolBiasRun));
  for (size_t i = 0; i < row.size(); ++i) row[i] = bias[static_cast<int64_t>(i) % channels];
  return row;
}

// Whether the fused op's pass runs whole NCHW planes as one run of window rows
// (PoolingKernelTable.h): 2 x 2 windows covering the plane, rows of at most max_out_w.
bool flat_planes(int64_t max_out_w, const PoolGeometry& g, Layout layout) {
  return layout == Layout::NCHW && g.p.kernel_h == 2 && g.p.kernel_w == 2 &&
         g.in.h == 2 * g.out.h && g.in.w == 2 * g.out.w && g.out.w <= max_out_w;
}

// Planes [first, last) of the flat path's items: a run of planes per pool chunk.
template <typename F>
void for_each_plane_run(ThreadPool& pool, const PoolGeometry& g, const F& f) {
  pool.parallel_for(g.in.n * g.in.c, f, grain_for(g.out.h * g.out.w * g.window_size()));
}

// The fused bias + ReLU + max pool over tiled windows: the same items as max pooling.
void bias_relu_maxpool_forward_tiled(ThreadPool& pool, const PoolGeometry& g, Layout layout,
                                     const float* x, const float* bias, float* y) {
  const PoolingKernelTable& k = pooling_kernels();
  if (flat_planes(k.flat_forward_max_out_w, g, layout)) {
    const int64_t in_plane = g.in.h * g.in.w, out_plane = g.out.h * g.out.w, C = g.in.c;
    for_each_plane_run(pool, g, [&](int64_t first, int64_t last) {
      k.bias_relu_max2_forward_planes(x + first * in_plane, bias, C, first % C, last - first,
                                      g.out.h, g.out.w, y + first * out_plane);
    });
    return;
  }
  const int64_t kh = g.p.kernel_h, kw = g.p.kernel_w;
  const int64_t channels = layout == Layout::NCHW ? 1 : g.in.c;
  const int64_t in_row = g.in.w * channels, out_row = g.out.w * channels;
  const std::vector<float> biases = kernel_biases(bias, g.in.c, layout);
  const float* b = biases.data();
  for_each_tiled_item(
      pool, g, layout, [&](int64_t outer, int64_t oh, int64_t rows, int64_t channel) {
        const float* xr = x + (outer * g.in.h + oh * kh) * in_row;
        float* yr = y + (outer * g.out.h + oh) * out_row;
        if (layout == Layout::NCHW)
          k.bias_relu_max_forward_planar(xr, b[channel], g.in.w, kh, kw, yr, g.out.w, rows);
        else
          k.bias_relu_max_forward_pixels(xr, b, g.in.w, g.in.c, kh, kw, yr, g.out.w);
      });
}

// Backward also sums each item's passed dy per channel into its own slot of `partials`
// (items x channels per item), added up in item order afterwards: dbias does not depend
// on how the pool split the items.
void bias_relu_maxpool_backward_tiled(ThreadPool& pool, const PoolGeometry& g, Layout layout,
                                      const float* x, const float* bias, const float* y,
                                      const float* dy, float* dx, float* dbias) {
  const PoolingKernelTable& k = pooling_kernels();
  const int64_t kh = g.p.kernel_h, kw = g.p.kernel_w, C = g.in.c;
  const bool planar = layout == Layout::NCHW;
  const int64_t channels = planar ? 1 : C;
  const int64_t in_row = g.in.w * channels, out_row = g.out.w * channels;
  const int64_t items = planar ? g.in.n * C : g.in.n * g.out.h;
  thread_local std::vector<double> partials;  // the calling lane's; reused across steps
  partials.assign(static_cast<size_t>(items * channels), 0.0);
  double* sums = partials.data();
  const std::vector<float> biases = kernel_biases(bias, C, layout);
  const float* b = biases.data();
  const auto tiled_item = [&](int64_t outer, int64_t oh, int64_t rows, int64_t channel) {
    const int64_t at = (outer * g.in.h + oh * kh) * in_row;
    const int64_t row = (outer * g.out.h + oh) * out_row;
    if (planar)
      k.bias_relu_max_backward_planar(x + at, b[channel], dy + row, dx + at, g.in.w, kh, kw,
                                      g.out.w, rows);
    else
      k.bias_relu_max_backward_pixels(x + at, b, dy + row, dx + at, g.in.w, C, kh, kw, g.out.w);
    // A plane's pooled rows are contiguous: one sum per plane (NCHW), per row (NHWC).
    k.passed_sums(y + row, dy + row, rows * g.out.w, channels,
                  sums + (planar ? outer : outer * g.out.h + oh) * channels);
    zero_rows_below(g, in_row, outer, oh, rows, dx);
  };
  if (flat_planes(k.flat_backward_max_out_w, g, layout)) {
    const int64_t in_plane = g.in.h * g.in.w, out_plane = g.out.h * g.out.w;
    for_each_plane_run(pool, g, [&](int64_t first, int64_t last) {
      k.bias_relu_max2_backward_planes(x + first * in_plane, bias, C, first % C, last - first,
                                       g.out.h, g.out.w, dy + first * out_plane,
                                       dx + first * in_plane);
      for (int64_t plane = first; plane < last; ++plane)
        k.passed_sums(y + plane * out_plane, dy + plane * out_plane, out_plane, 1, sums + plane);
    });
  } else {
    for_each_tiled_item(pool, g, layout, tiled_item);
  }
  // Items are (n, c) planes in NCHW, (n, oh) rows with C sums each in NHWC: either way the
  // sums run n, then channel, then row.
  std::vector<double> total(static_cast<size_t>(C), 0.0);
  const double* next = sums;
  for (int64_t n = 0; n < g.in.n; ++n)
    if (planar) {
      for (int64_t c = 0; c < C; ++c) total[static_cast<size_t>(c)] += *next++;
    } else {
      for (int64_t oh = 0; oh < g.out.h; ++oh)
        for (int64_t c = 0; c < C; ++c) total[static_cast<size_t>(c)] += *next++;
    }
  for (int64_t c = 0; c < C; ++c) dbias[c] = static_cast<float>(total[static_cast<size_t>(c)]);
}

}  // namespace

void CpuOps::maxpool_forward(const ExecContext& ctx, const PoolParams& params, const Tensor& x,
                             Tensor& y) {
  const PoolGeometry g = checked_geometry("maxpool.fwd", params, x, "x", y, "y");
  profiler::KernelScope scope(ctx.tracer, "maxpool.fwd", ctx.device, ctx.lane, window_reads(g),
                              static_cast<double>(x.bytes() + y.bytes()));
  if (tiled_windows(g)) {
    maxpool_forward_tiled(ctx.pool, g, x.layout(), x.data(), y.data());
    return;
  }
  // -inf starts every window: padding is never a candidate, and each window has at
  // least one input because the padding is smaller than the kernel.
  pool_forward(
      ctx.pool, g, x.layout(), x.data(), y.data(), kLowest,
      [](float acc, float v) { return v > acc ? v : acc; }, 1.0f);
}

void CpuOps::bias_relu_maxpool_forward(const ExecContext& ctx, const PoolParams& params,
                                       const Tensor& x, const Tensor& bias, Tensor& y) {
  const PoolGeometry g = checked_geometry("bias_relu_maxpool.fwd", params, x, "x", y, "y");
  if (!tiled_windows(g)) {
    OpKernels::bias_relu_maxpool_forward(ctx, params, x, bias, y);
    return;
  }
  op_checks::check_per_channel("bias_relu_maxpool.fwd", "x", x, "bias", bias);
  profiler::KernelScope scope(ctx.tracer, "bias_relu_maxpool.fwd", ctx.device, ctx.lane,
                              2 * window_reads(g), static_cast<double>(x.bytes() + y.bytes()));
  bias_relu_maxpool_forward_tiled(ctx.pool, g, x.layout(), x.data(), bias.data(), y.data());
}

void CpuOps::bias_relu_maxpool_backward(const ExecContext& ctx, const PoolParams& params,
                                        const Tensor& x, const Tensor& bias, const Tensor& y,
                                        const Tensor& dy, Tensor& dx, Tensor& dbias) {
  const PoolGeometry g = checked_geometry("bias_relu_maxpool.bwd", params, x, "x", dy, "dy");
  if (!tiled_windows(g)) {
    OpKernels::bias_relu_maxpool_backward(ctx, params, x, bias, y, dy, dx, dbias);
    return;
  }
  check_like("bias_relu_maxpool.bwd", "dx", dx, "x", x);
  check_like("bias_relu_maxpool.bwd", "y", y, "dy", dy);
  op_checks::check_per_channel("bias_relu_maxpool.bwd", "x", x, "bias", bias);
  op_checks::check_per_channel("bias_relu_maxpool.bwd", "x", x, "dbias", dbias);
  profiler::KernelScope scope(ctx.tracer, "bias_relu_maxpool.bwd", ctx.device, ctx.lane,
                              2 * window_reads(g),
                              static_cast<double>(2 * x.bytes() + 2 * dy.bytes()));
  bias_relu_maxpool_backward_tiled(ctx.pool, g, x.layout(), x.data(), bias.data(), y.data(),
                                   dy.data(), dx.data(), dbias.data());
}

void CpuOps::avgpool_forward(const ExecContext& ctx, const PoolParams& params, const Tensor& x,
                             Tensor& y) {
  const PoolGeometry g = checked_geometry("avgpool.fwd", params, x, "x", y, "y");
  profiler::KernelScope scope(ctx.tracer, "avgpool.fwd", ctx.device, ctx.lane, window_reads(g),
                              static_cast<double>(x.bytes() + y.bytes()));
  pool_forward(
      ctx.pool, g, x.layout(), x.data(), y.data(), 0.0f, [](float acc, float v) { return acc + v; },
      g.inv_area());
}

void CpuOps::maxpool_backward(const ExecContext& ctx, const PoolParams& params, const Tensor& x,
                              const Tensor& dy, Tensor& dx) {
  const PoolGeometry g = checked_geometry("maxpool.bwd", params, x, "x", dy, "dy");
  check_like("maxpool.bwd", "dx", dx, "x", x);
  profiler::KernelScope scope(ctx.tracer, "maxpool.bwd", ctx.device, ctx.lane, window_reads(g),
                              static_cast<double>(2 * x.bytes() + dy.bytes()));
  const float* xd = x.data();
  const float* dyd = dy.data();
  float* dxd = dx.data();
  if (tiled_windows(g)) {
    maxpool_backward_tiled(ctx.pool, g, x.layout(), xd, dyd, dxd);
    return;
  }
  if (x.layout() == Layout::NCHW) {
    const int64_t in_plane = g.in.h * g.in.w, out_plane = g.out.h * g.out.w;
    const std::vector<Span> col_spans = g.output_cols_by_offset();
    ctx.pool.parallel_for(
        g.in.n * g.in.c,
        [&](int64_t first, int64_t last) {
          std::vector<float> best(g.out.w);
          std::vector<int64_t> arg(g.out.w);
          for (int64_t p = first; p < last; ++p)
            maxpool_backward_plane(g, col_spans, xd + p * in_plane, dyd + p * out_plane,
                                   dxd + p * in_plane, best, arg);
        },
        grain_for(out_plane * g.window_size()));
  } else {
    // Windows overlap when the stride is below the kernel, so items split by image and
    // channel block (never by rows) to keep every dx element with one writer.
    const int64_t blocks = ceil_div(g.in.c, kChannelBlock);
    ctx.pool.parallel_for(
        g.in.n * blocks,
        [&](int64_t first, int64_t last) {
          for (int64_t item = first; item < last; ++item) {
            const int64_t n = item / blocks, c0 = (item % blocks) * kChannelBlock;
            maxpool_backward_block(g, xd, dyd, dxd, n, c0, std::min(g.in.c, c0 + kChannelBlock));
          }
        },
        grain_for(g.out.h * g.out.w * kChannelBlock * g.window_size()));
  }
}

void CpuOps::avgpool_backward(const ExecContext& ctx, const PoolParams& params, const Tensor& dy,
                              Tensor& dx) {
  const PoolGeometry g = checked_geometry("avgpool.bwd", params, dx, "dx", dy, "dy");
  profiler::KernelScope scope(ctx.tracer, "avgpool.bwd", ctx.device, ctx.lane, window_reads(g),
                              static_cast<double>(dx.bytes() + dy.bytes()));
  const float* dyd = dy.data();
  float* dxd = dx.data();
  if (dx.layout() == Layout::NCHW) {
    const int64_t in_plane = g.in.h * g.in.w, out_plane = g.out.h * g.out.w;
    const std::vector<Span> col_spans = g.output_cols_by_offset();
    ctx.pool.parallel_for(
        g.in.n * g.in.c,
        [&](int64_t first, int64_t last) {
          for (int64_t p = first; p < last; ++p)
            avgpool_backward_plane(g, col_spans, dyd + p * out_plane, dxd + p * in_plane);
        },
        grain_for(out_plane * g.window_size()));
  } else {
    ctx.pool.parallel_for(
        g.in.n * g.in.h,
        [&](int64_t first, int64_t last) {
          for (int64_t row = first; row < last; ++row)
            avgpool_backward_row(g, row / g.in.h, row % g.in.h, dyd, dxd);
        },
        grain_for(g.in.w * g.in.c));
  }
}

void CpuOps::global_avgpool_forward(const ExecContext& ctx, const Tensor& x, Tensor& y) {
  check_global_pool("gap.fwd", x, "x", y, "y");
  const Shape4 s = x.shape();
  profiler::KernelScope scope(ctx.tracer, "gap.fwd", ctx.device, ctx.lane, 1.0 * x.size(),
                              static_cast<double>(x.bytes() + y.bytes()));
  const float* xd = x.data();
  float* yd = y.data();  // {N, C, 1, 1}: element n * C + c in either layout
  const int64_t plane = s.h * s.w;
  const double inv_plane = 1.0 / static_cast<double>(plane);
  if (x.layout() == Layout::NCHW) {
    ctx.pool.parallel_for(
        s.n * s.c,
        [&](int64_t first, int64_t last) {
          for (int64_t p = first; p < last; ++p) {
            const auto sum = sum_run<1>(p * plane, (p + 1) * plane,
                                        [xd](int64_t i) { return std::array<float, 1>{xd[i]}; });
            yd[p] = static_cast<float>(sum[0] * inv_plane);
          }
        },
        grain_for(plane));
  } else {
    // One image per item, read front to back into a per-channel accumulator.
    ctx.pool.parallel_for(
        s.n,
        [&](int64_t first, int64_t last) {
          std::vector<double> acc(s.c);
          for (int64_t n = first; n < last; ++n) {
            std::fill(acc.begin(), acc.end(), 0.0);
            for (int64_t pixel = 0; pixel < plane; ++pixel) {
              const float* xp = xd + (n * plane + pixel) * s.c;
              for (int64_t c = 0; c < s.c; ++c) acc[c] += xp[c];
            }
            for (int64_t c = 0; c < s.c; ++c)
              yd[n * s.c + c] = static_cast<float>(acc[c] * inv_plane);
          }
        },
        grain_for(plane * s.c));
  }
}

void CpuOps::global_avgpool_backward(const ExecContext& ctx, const Tensor& dy, Tensor& dx) {
  check_global_pool("gap.bwd", dx, "dx", dy, "dy");
  const Shape4 s = dx.shape();
  profiler::KernelScope scope(ctx.tracer, "gap.bwd", ctx.device, ctx.lane, 1.0 * dx.size(),
                              static_cast<double>(dx.bytes() + dy.bytes()));
  const float* dyd = dy.data();
  float* dxd = dx.data();
  const int64_t plane = s.h * s.w;
  const float inv_plane = 1.0f / static_cast<float>(plane);
  if (dx.layout() == Layout::NCHW) {
    ctx.pool.parallel_for(
        s.n * s.c,
        [&](int64_t first, int64_t last) {
          for (int64_t p = first; p < last; ++p)
            std::fill_n(dxd + p * plane, plane, dyd[p] * inv_plane);
        },
        grain_for(plane));
  } else {
    ctx.pool.parallel_for(
        s.n * plane,
        [&](int64_t first, int64_t last) {
          for (int64_t row = first; row < last; ++row) {
            const float* dyp = dyd + (row / plane) * s.c;
            float* dxp = dxd + row * s.c;
            for (int64_t c = 0; c < s.c; ++c) dxp[c] = dyp[c] * inv_plane;
          }
        },
        grain_for(s.c));
  }
}

}  // namespace tunescope::cpu
