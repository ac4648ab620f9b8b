// A conv problem's flop count per pass and least bytes against hand-computed counts,
// and against multiply-adds counted by walking each pass's loops.
#include <gtest/gtest.h>

#include "core/base/ConvProblem.h"

namespace tunescope {
namespace {

ConvProblem problem(Shape4 input, int64_t k, int64_t r, int64_t stride, int64_t pad) {
  return ConvProblem{input, k, r, r, stride, stride, pad, pad, Layout::NCHW};
}

// Multiply-adds of each pass as a naive implementation loops over them: forward over
// outputs and filter taps (taps over the padding included, as the standard count, and
// cuDNN's, takes them); backward data over input gradients, gathering the output
// gradients each one feeds; backward filter over weights, summing over the positions
// they touched. Without padding every pass does the same multiply-adds.
struct PassMacs {
  double forward = 0, backward_data = 0, backward_filter = 0;
};
PassMacs count_macs(const ConvProblem& p) {
  const Shape4 out = p.output();
  const int64_t R = p.kernel_h, S = p.kernel_w, u = p.stride_h, v = p.stride_w;
  PassMacs m;
  for (int64_t n = 0; n < p.input.n; ++n)
    for (int64_t k = 0; k < p.out_channels; ++k)
      for (int64_t y = 0; y < out.h; ++y)
        for (int64_t x = 0; x < out.w; ++x) m.forward += static_cast<double>(p.input.c * R * S);
  for (int64_t n = 0; n < p.input.n; ++n)
    for (int64_t c = 0; c < p.input.c; ++c)
      for (int64_t h = 0; h < p.input.h; ++h)
        for (int64_t w = 0; w < p.input.w; ++w)
          for (int64_t k = 0; k < p.out_channels; ++k)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < S; ++s) {
                const int64_t ty = h + p.pad_h - r, tx = w + p.pad_w - s;
                if (ty < 0 || tx < 0 || ty % u || tx % v || ty / u >= out.h || tx / v >= out.w)
                  continue;
                m.backward_data += 1;
              }
  for (int64_t k = 0; k < p.out_channels; ++k)
    for (int64_t c = 0; c < p.input.c; ++c)
      for (int64_t r = 0; r < R; ++r)
        for (int64_t s = 0; s < S; ++s)
          for (int64_t n = 0; n < p.input.n; ++n)
            for (int64_t y = 0; y < out.h; ++y)
              for (int64_t x = 0; x < out.w; ++x) {
                const int64_t iy = y * u - p.pad_h + r, ix = x * v - p.pad_w + s;
                if (iy < 0 || ix < 0 || iy >= p.input.h || ix >= p.input.w) continue;
                m.backward_filter += 1;
              }
  return m;
}

TEST(ConvProblemCounts, FlopsPerPassByHand) {
  // 2x3x5x5, 4 filters 3x3, stride 1, pad 1: output 2x4x5x5 = 200 elements x 27 taps.
  const ConvProblem same = problem({2, 3, 5, 5}, 4, 3, 1, 1);
  EXPECT_DOUBLE_EQ(same.flops(), 2.0 * 200 * 27);  // 10800
  // 1x2x7x7, 3 filters 3x3, stride 2, no pad: output 1x3x3x3 = 27 elements x 18 taps.
  const ConvProblem strided = problem({1, 2, 7, 7}, 3, 3, 2, 0);
  EXPECT_DOUBLE_EQ(strided.flops(), 2.0 * 27 * 18);  // 972
  // ResNet-18-small's first conv at batch 128: 128x3x32x32 -> 16 channels, 3x3, pad 1.
  const ConvProblem resnet_stem = problem({128, 3, 32, 32}, 16, 3, 1, 1);
  EXPECT_DOUBLE_EQ(resnet_stem.flops(), 2.0 * 128 * 16 * 32 * 32 * 3 * 9);  // 113,246,208
}

TEST(ConvProblemCounts, EveryPassCostsTheForwardCount) {
  // Unpadded: the three passes' loops do the same multiply-adds, flops() / 2 each.
  for (const ConvProblem& p :
       {problem({1, 2, 7, 7}, 3, 3, 2, 0), problem({3, 4, 6, 6}, 2, 1, 1, 0),
        problem({2, 3, 8, 8}, 5, 3, 1, 0), problem({1, 2, 9, 9}, 2, 5, 2, 0)}) {
    const PassMacs macs = count_macs(p);
    EXPECT_DOUBLE_EQ(p.flops(), 2 * macs.forward) << p.key();
    EXPECT_DOUBLE_EQ(p.flops(), 2 * macs.backward_data) << p.key();
    EXPECT_DOUBLE_EQ(p.flops(), 2 * macs.backward_filter) << p.key();
  }
  // Padded: the count is the forward one, taps over the padding included; the backward
  // loops skip those, so the effective rate of a backward pass is conservative by at
  // most that share (on a 5x5 plane padded by 1, 169 of the 225 taps fall inside).
  const ConvProblem padded = problem({1, 1, 5, 5}, 1, 3, 1, 1);
  const PassMacs macs = count_macs(padded);
  EXPECT_DOUBLE_EQ(padded.flops(), 2 * macs.forward);
  EXPECT_DOUBLE_EQ(macs.forward, 25 * 9);
  EXPECT_DOUBLE_EQ(macs.backward_data, 169);  // (2 + 3 + 3 + 3 + 2) squared
  EXPECT_DOUBLE_EQ(macs.backward_filter, 169);
}

TEST(ConvProblemCounts, LeastBytesAreTheThreeTensorsOnce) {
  // input 150 + filter 4x3x3x3 = 108 + output 200 floats.
  EXPECT_DOUBLE_EQ(problem({2, 3, 5, 5}, 4, 3, 1, 1).min_bytes(), 4.0 * (150 + 108 + 200));
  // input 98 + filter 54 + output 27 floats.
  EXPECT_DOUBLE_EQ(problem({1, 2, 7, 7}, 3, 3, 2, 0).min_bytes(), 4.0 * (98 + 54 + 27));
}

}  // namespace
}  // namespace tunescope
