// A diverging candidate must surface as a NaN loss: kernels between the conv and the
// loss may not launder NaN into finite numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuOps.h"

namespace tunescope::cpu {
namespace {

TEST(NanPropagation, ReluKeepsNan) {
  ThreadPool pool(1);
  CpuOps ops;
  Tensor x({1, 3, 1, 1}, Layout::NCHW), y({1, 3, 1, 1}, Layout::NCHW);
  x.data()[0] = std::numeric_limits<float>::quiet_NaN();
  x.data()[1] = -2.0f;
  x.data()[2] = 3.0f;
  ops.relu_forward(ExecContext{pool}, x, y);
  EXPECT_TRUE(std::isnan(y.data()[0]));
  EXPECT_EQ(y.data()[1], 0.0f);
  EXPECT_EQ(y.data()[2], 3.0f);
}

TEST(NanPropagation, SoftmaxLossOfNanLogitsIsNan) {
  ThreadPool pool(1);
  CpuOps ops;
  Tensor logits({2, 4, 1, 1}, Layout::NHWC);
  logits.fill(std::numeric_limits<float>::quiet_NaN());
  const std::vector<int32_t> labels{1, 2};
  EXPECT_TRUE(
      std::isnan(ops.softmax_cross_entropy(ExecContext{pool}, logits, labels, nullptr, nullptr)));
}

}  // namespace
}  // namespace tunescope::cpu
