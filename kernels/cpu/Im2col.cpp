// im2col / col2im for NCHW and NHWC images (see Im2col.h).
#include "kernels/cpu/Im2col.h"

#include <algorithm>
#include <cstring>

#include "kernels/shared/ConvArgs.h"

namespace tunescope::cpu {

int64_t col_elements(const ConvProblem& p) {
  const Shape4 out = p.output();
  return p.input.c * p.kernel_h * p.kernel_w * out.h * out.w;
}

bool col_is_identity(const ConvProblem& p) {
  return p.kernel_h == 1 && p.kernel_w == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_h == 0 &&
         p.pad_w == 0;
}

namespace {

// Visits every (column-matrix run, image run) pair of one image: `run(col, image, n,
// image_step)` covers n taps that read image[i * image_step] for i < n. The same walk
// serves im2col (copy) and col2im (add), so the two stay exact adjoints. Taps in the
// padding are reported to `pad(col, n)`. Both pointers are mutable because each caller
// writes through one of them; the callers' lambdas never write through the other.
template <typename Run, typename Pad>
void walk_columns(const ConvProblem& p, float* image_base, float* col, Run run, Pad pad) {
  const Shape4 in = p.input, out = p.output();
  const int64_t C = in.c, H = in.h, W = in.w, P = out.h, Q = out.w;
  const int64_t R = p.kernel_h, S = p.kernel_w, u = p.stride_h, v = p.stride_w;
  if (p.layout == Layout::NCHW) {
    for (int64_t c = 0; c < C; ++c)
      for (int64_t r = 0; r < R; ++r)
        for (int64_t s = 0; s < S; ++s) {
          float* row = col + ((c * R + r) * S + s) * P * Q;
          const IndexRange qs = valid_outputs(Q, v, s - p.pad_w, W);
          for (int64_t pp = 0; pp < P; ++pp) {
            float* dst = row + pp * Q;
            const int64_t h = pp * u + r - p.pad_h;
            if (h < 0 || h >= H || qs.begin >= qs.end) {
              pad(dst, Q);
              continue;
            }
            pad(dst, qs.begin);
            run(dst + qs.begin, image_base + (c * H + h) * W + qs.begin * v + s - p.pad_w,
                qs.end - qs.begin, v);
            pad(dst + qs.end, Q - qs.end);
          }
        }
    return;
  }
  // NHWC: for a fixed (p, q, r) consecutive s read consecutive pixels, and each pixel's
  // channels are contiguous on both sides, so one run covers all valid (s, c).
  const int64_t RSC = R * S * C;
  for (int64_t pp = 0; pp < P; ++pp)
    for (int64_t q = 0; q < Q; ++q) {
      float* dst_pixel = col + (pp * Q + q) * RSC;
      const int64_t w0 = q * v - p.pad_w;
      const int64_t s_begin = std::clamp<int64_t>(-w0, 0, S);
      const int64_t s_end = std::clamp<int64_t>(W - w0, s_begin, S);
      for (int64_t r = 0; r < R; ++r) {
        float* dst = dst_pixel + r * S * C;
        const int64_t h = pp * u + r - p.pad_h;
        if (h < 0 || h >= H || s_begin >= s_end) {
          pad(dst, S * C);
          continue;
        }
        pad(dst, s_begin * C);
        run(dst + s_begin * C, image_base + (h * W + w0 + s_begin) * C, (s_end - s_begin) * C, 1);
        pad(dst + s_end * C, (S - s_end) * C);
      }
    }
}

}  // namespace

void im2col(const ConvProblem& p, const float* image, float* col) {
  walk_columns(
      p, const_cast<float*>(image), col,
      [](float* dst, const float* src, int64_t n, int64_t step) {
        if (step == 1) {
          std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
          return;
        }
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i * step];
      },
      [](float* dst, int64_t n) { std::fill_n(dst, n, 0.0f); });
}

void col2im(const ConvProblem& p, const float* col, float* image) {
  std::fill_n(image, p.input.item_count(), 0.0f);
  walk_columns(
      p, image, const_cast<float*>(col),
      [](float* src_col, float* dst, int64_t n, int64_t step) {
        for (int64_t i = 0; i < n; ++i) dst[i * step] += src_col[i];
      },
      [](float*, int64_t) {});
}

}  // namespace tunescope::cpu
