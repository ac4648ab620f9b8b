#include "core/base/Tensor.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "core/base/ConvProblem.h"
#include "core/base/Error.h"
#include "core/base/ThreadPool.h"

namespace tunescope {
namespace {

TEST(Tensor, StridesFollowLayout) {
  const Shape4 s{2, 3, 4, 5};
  Tensor nchw(s, Layout::NCHW), nhwc(s, Layout::NHWC);
  EXPECT_EQ(nchw.offset(1, 2, 3, 4), 1 * 60 + 2 * 20 + 3 * 5 + 4);
  EXPECT_EQ(nhwc.offset(1, 2, 3, 4), 1 * 60 + 3 * 15 + 4 * 3 + 2);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(nchw.data()) % 64, 0u);
  EXPECT_EQ(nchw.at(1, 2, 3, 4), 0.0f);  // zero-initialised
}

TEST(Tensor, CopyIsDeep) {
  Tensor a({1, 2, 2, 2}, Layout::NHWC);
  a.fill(3.0f);
  Tensor b = a;
  b.at(0, 1, 1, 1) = 5.0f;
  EXPECT_EQ(a.at(0, 1, 1, 1), 3.0f);
}

TEST(Tensor, ConvertLayoutKeepsLogicalValues) {
  const Shape4 s{3, 5, 4, 7};
  Tensor src(s, Layout::NCHW), dst(s, Layout::NHWC), back(s, Layout::NCHW);
  for (int64_t i = 0; i < src.size(); ++i) src.data()[i] = static_cast<float>(i);
  ThreadPool pool(2);
  convert_layout(src, dst, &pool);
  convert_layout(dst, back);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t w = 0; w < s.w; ++w) ASSERT_EQ(dst.at(n, c, h, w), src.at(n, c, h, w));
  for (int64_t i = 0; i < src.size(); ++i) ASSERT_EQ(back.data()[i], src.data()[i]);
}

TEST(ConvProblem, OutputShapeAndFlops) {
  ConvProblem p{{8, 3, 32, 32}, 16, 3, 3, 2, 2, 1, 1, Layout::NHWC};
  EXPECT_EQ(p.output(), (Shape4{8, 16, 16, 16}));
  EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 8 * 16 * 16 * 16 * 3 * 3 * 3);
  EXPECT_EQ(p.key(), "n8c3h32w32_k16r3s3_u2v2_p1q1_nhwc_f32");
  p.kernel_h = 40;
  try {
    p.validate();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("kernel larger"), std::string::npos);
  }
}

TEST(Layout, ParseRejectsUnknown) {
  EXPECT_EQ(parse_layout("NHWC"), Layout::NHWC);
  EXPECT_THROW(parse_layout("nwhc"), Error);
}

}  // namespace
}  // namespace tunescope
