#include "kernels/cpu/ConvGrouped.h"

#include <algorithm>

#include "kernels/shared/ConvArgs.h"

namespace tunescope::cpu {
namespace {

// One filter tap (r, s) of one (output channel, input channel) pair: the output rows
// and columns whose input pixel lies inside the image, and where the input pixel is.
struct Tap {
  IndexRange rows, cols;
  int64_t row_offset, col_offset;  // input row = p * u + row_offset
};

Tap tap(const ConvProblem& p, const Shape4& out, int64_t r, int64_t s) {
  return {valid_outputs(out.h, p.stride_h, r - p.pad_h, p.input.h),
          valid_outputs(out.w, p.stride_w, s - p.pad_w, p.input.w), r - p.pad_h, s - p.pad_w};
}

// Calls body(k, c_in_group, r, s, tap) for every filter tap of output channel k.
template <typename Body>
void for_each_tap(const ConvProblem& p, const Shape4& out, int64_t k, Body&& body) {
  const int64_t group_inputs = p.input.c / p.groups;
  for (int64_t c = 0; c < group_inputs; ++c)
    for (int64_t r = 0; r < p.kernel_h; ++r)
      for (int64_t s = 0; s < p.kernel_w; ++s) body(k, c, r, s, tap(p, out, r, s));
}

// Calls work(n, k_first, k_end, c_first) for each (image, group) pair, in parallel.
template <typename Work>
void for_each_image_group(const ConvProblem& p, ThreadPool& pool, Work&& work) {
  const int64_t groups = p.groups, group_outputs = p.out_channels / groups;
  const int64_t group_inputs = p.input.c / groups;
  pool.parallel_for(
      p.input.n * groups,
      [&](int64_t first, int64_t end) {
        for (int64_t item = first; item < end; ++item) {
          const int64_t n = item / groups, g = item % groups;
          work(n, g * group_outputs, (g + 1) * group_outputs, g * group_inputs);
        }
      },
      1);
}

void zero_channels(Tensor& t, int64_t n, int64_t c_first, int64_t c_end) {
  for (int64_t c = c_first; c < c_end; ++c)
    for (int64_t h = 0; h < t.shape().h; ++h)
      for (int64_t w = 0; w < t.shape().w; ++w) t.at(n, c, h, w) = 0.0f;
}

}  // namespace

void grouped_conv_forward(const ConvProblem& p, ThreadPool& pool, const Tensor& x, const Tensor& w,
                          Tensor& y) {
  const Shape4 out = p.output();
  const Strides4 xs = x.strides(), ys = y.strides();
  const int64_t u = p.stride_h, v = p.stride_w;
  for_each_image_group(p, pool, [&](int64_t n, int64_t k_first, int64_t k_end, int64_t c_first) {
    zero_channels(y, n, k_first, k_end);
    for (int64_t k = k_first; k < k_end; ++k)
      for_each_tap(p, out, k, [&](int64_t, int64_t c, int64_t r, int64_t s, const Tap& t) {
        const float wv = w.at(k, c, r, s);
        const float* xi = x.data() + n * xs.n + (c_first + c) * xs.c;
        float* yo = y.data() + n * ys.n + k * ys.c;
        for (int64_t op = t.rows.begin; op < t.rows.end; ++op) {
          const float* xrow = xi + (op * u + t.row_offset) * xs.h;
          float* yrow = yo + op * ys.h;
          for (int64_t oq = t.cols.begin; oq < t.cols.end; ++oq)
            yrow[oq * ys.w] += wv * xrow[(oq * v + t.col_offset) * xs.w];
        }
      });
  });
}

void grouped_conv_backward_data(const ConvProblem& p, ThreadPool& pool, const Tensor& dy,
                                const Tensor& w, Tensor& dx) {
  const Shape4 out = p.output();
  const Strides4 xs = dx.strides(), ys = dy.strides();
  const int64_t u = p.stride_h, v = p.stride_w;
  for_each_image_group(p, pool, [&](int64_t n, int64_t k_first, int64_t k_end, int64_t c_first) {
    zero_channels(dx, n, c_first, c_first + p.input.c / p.groups);
    for (int64_t k = k_first; k < k_end; ++k)
      for_each_tap(p, out, k, [&](int64_t, int64_t c, int64_t r, int64_t s, const Tap& t) {
        const float wv = w.at(k, c, r, s);
        float* dxi = dx.data() + n * xs.n + (c_first + c) * xs.c;
        const float* dyo = dy.data() + n * ys.n + k * ys.c;
        for (int64_t op = t.rows.begin; op < t.rows.end; ++op) {
          float* dxrow = dxi + (op * u + t.row_offset) * xs.h;
          const float* dyrow = dyo + op * ys.h;
          for (int64_t oq = t.cols.begin; oq < t.cols.end; ++oq)
            dxrow[(oq * v + t.col_offset) * xs.w] += wv * dyrow[oq * ys.w];
        }
      });
  });
}

void grouped_conv_backward_filter(const ConvProblem& p, ThreadPool& pool, const Tensor& x,
                                  const Tensor& dy, Tensor& dw) {
  const Shape4 out = p.output();
  const Strides4 xs = x.strides(), ys = dy.strides();
  const int64_t u = p.stride_h, v = p.stride_w;
  const int64_t group_outputs = p.out_channels / p.groups, group_inputs = p.input.c / p.groups;
  pool.parallel_for(
      p.out_channels,
      [&](int64_t first, int64_t end) {
        for (int64_t k = first; k < end; ++k) {
          const int64_t c_first = k / group_outputs * group_inputs;
          for_each_tap(p, out, k, [&](int64_t, int64_t c, int64_t r, int64_t s, const Tap& t) {
            float sum = 0.0f;
            for (int64_t n = 0; n < p.input.n; ++n) {
              const float* xi = x.data() + n * xs.n + (c_first + c) * xs.c;
              const float* dyo = dy.data() + n * ys.n + k * ys.c;
              for (int64_t op = t.rows.begin; op < t.rows.end; ++op) {
                const float* xrow = xi + (op * u + t.row_offset) * xs.h;
                const float* dyrow = dyo + op * ys.h;
                for (int64_t oq = t.cols.begin; oq < t.cols.end; ++oq)
                  sum += dyrow[oq * ys.w] * xrow[(oq * v + t.col_offset) * xs.w];
              }
            }
            dw.at(k, c, r, s) = sum;
          });
        }
      },
      1);
}

}  // namespace tunescope::cpu
