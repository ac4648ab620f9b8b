// Max pooling over tiled windows (stride = kernel, no padding: PoolingKernels.h) on every
// instruction-set path this CPU runs (TUNESCOPE_ELEMENTWISE_ISA forces each), in both
// layouts, against a plain reference written here: forward and backward must match it
// exactly (tolerance 0: a max and the routing of dy to one input are exact), with values
// drawn from eight levels so that most windows hold ties and the first maximum (rows,
// then columns) must win. The shapes cover channel counts below, at and above the vector
// widths (1, 3, 6, 16, 17, 40), odd planes with rows and columns past the last window,
// and kernels of 2x2, 3x3 and 2x3.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "CpuOpsTestSupport.h"
#include "core/base/Error.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuIsa.h"
#include "kernels/cpu/CpuOps.h"

namespace tunescope::cpu::test_support {
namespace {

struct TiledCase {
  Shape4 in;
  int64_t kh, kw;
};

// The reference: each window's first maximum (strict >, rows then columns).
struct Reference {
  Tensor y, dx;
};
Reference reference(const TiledCase& tc, const Tensor& x, const Tensor& dy) {
  const Shape4 s = tc.in;
  const Shape4 o{s.n, s.c, s.h / tc.kh, s.w / tc.kw};
  Reference r{Tensor(o, x.layout()), Tensor(s, x.layout())};
  r.dx.fill(0.0f);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t oh = 0; oh < o.h; ++oh)
        for (int64_t ow = 0; ow < o.w; ++ow) {
          int64_t bh = oh * tc.kh, bw = ow * tc.kw;
          for (int64_t i = 0; i < tc.kh; ++i)
            for (int64_t j = 0; j < tc.kw; ++j)
              if (x.at(n, c, oh * tc.kh + i, ow * tc.kw + j) > x.at(n, c, bh, bw)) {
                bh = oh * tc.kh + i;
                bw = ow * tc.kw + j;
              }
          r.y.at(n, c, oh, ow) = x.at(n, c, bh, bw);
          r.dx.at(n, c, bh, bw) = dy.at(n, c, oh, ow);
        }
  return r;
}

class MaxPoolTiled : public ::testing::TestWithParam<Layout> {};

TEST_P(MaxPoolTiled, MatchesTheReferenceExactlyOnEveryPath) {
  const std::vector<TiledCase> cases = {{{3, 1, 28, 28}, 2, 2},  {{2, 6, 28, 28}, 2, 2},
                                        {{2, 16, 10, 10}, 2, 2}, {{2, 3, 9, 7}, 2, 2},
                                        {{1, 17, 11, 13}, 2, 2}, {{2, 40, 6, 6}, 2, 2},
                                        {{2, 6, 9, 10}, 3, 3},   {{1, 5, 8, 9}, 2, 3},
                                        {{2, 16, 7, 66}, 2, 2},  {{1, 2, 5, 3}, 2, 2}};
  const Layout layout = GetParam();
  ThreadPool pool(3);
  ExecContext ctx{pool};
  CpuOps ops;
  uint32_t seed = 11;
  for (const TiledCase& tc : cases) {
    const PoolParams p{.kernel_h = tc.kh, .kernel_w = tc.kw, .stride_h = tc.kh, .stride_w = tc.kw};
    const Tensor x = levels_tensor(tc.in, layout, seed++);
    const Shape4 out = p.output(tc.in);
    const Tensor dy = random_tensor(out, layout, seed++);
    const Reference want = reference(tc, x, dy);
    for (CpuIsa isa : supported_cpu_isas()) {
      ForcedIsa forced(isa);
      SCOPED_TRACE(cat(to_string(isa), " ", tc.in.n, "x", tc.in.c, "x", tc.in.h, "x", tc.in.w,
                       " kernel ", tc.kh, "x", tc.kw));
      Tensor y(out, layout), dx(tc.in, layout);
      y.fill(-7.0f);
      dx.fill(-7.0f);  // every element must be written, the uncovered ones with 0
      ops.maxpool_forward(ctx, p, x, y);
      ops.maxpool_backward(ctx, p, x, dy, dx);
      EXPECT_TRUE(bitwise_equal(y, want.y)) << "y";
      EXPECT_TRUE(bitwise_equal(dx, want.dx)) << "dx";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, MaxPoolTiled, ::testing::Values(Layout::NCHW, Layout::NHWC),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace tunescope::cpu::test_support
