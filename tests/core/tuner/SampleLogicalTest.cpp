// sample_logical reads a tensor in logical (n, c, h, w) order whatever its layout: a
// sample of every entry takes them all in that order, a smaller one every
// (total / count)-th, so a candidate's NHWC output compares entry by entry with the
// NCHW reference.
#include <gtest/gtest.h>

#include "core/tuner/Measurement.h"

namespace tunescope::tuner {
namespace {

// Each entry holds its logical index n*C*H*W + c*H*W + h*W + w.
Tensor numbered(Layout layout) {
  const Shape4 s{2, 3, 4, 5};
  Tensor t(s, layout);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t w = 0; w < s.w; ++w)
          t.at(n, c, h, w) = static_cast<float>(((n * s.c + c) * s.h + h) * s.w + w);
  return t;
}

TEST(SampleLogical, EveryEntryInLogicalOrderInEitherLayout) {
  for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
    const std::vector<float> all = sample_logical(numbered(layout), 1000);  // more than 120
    ASSERT_EQ(all.size(), 120u);
    for (size_t j = 0; j < all.size(); ++j) EXPECT_EQ(all[j], static_cast<float>(j)) << j;
  }
}

TEST(SampleLogical, FewerEntriesAreEvenlySpacedInLogicalOrder) {
  for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
    const std::vector<float> some = sample_logical(numbered(layout), 7);
    ASSERT_EQ(some.size(), 7u);
    for (size_t j = 0; j < some.size(); ++j) {
      const size_t logical = j * 120 / 7;  // the entry sample_logical takes
      EXPECT_EQ(some[j], static_cast<float>(logical)) << j;
    }
  }
}

}  // namespace
}  // namespace tunescope::tuner
