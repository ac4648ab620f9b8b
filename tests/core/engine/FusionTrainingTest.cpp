// The fuse knob in real training: one step of resnet18-small with batch norm + ReLU and
// batch norm + residual add + ReLU fused, and one of lenet5 with each conv's bias + ReLU +
// max pool fused, learns what the unfused step learns, in both layouts, and its trace shows
// the fused kernels in place of the separate ones.
//
// Tolerance: loss within 1e-4 relative and each gradient within 1e-5 of its parameter's
// largest |gradient|: the fused kernels do the unfused ones' float operations in the same
// order, so the steps agree far inside this; a wrong mask, residual or statistic is wrong
// by O(1).
#include <gtest/gtest.h>

#include <string>

#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"
#include "tests/core/engine/OneStepTraining.h"

namespace tunescope {
namespace {

using test_support::expect_gradients_near;
using test_support::kernel_count;
using test_support::OneStep;
using test_support::train_one_step;

SessionOptions resnet_options(Layout layout, bool fuse) {
  SessionOptions o = test_support::lenet_fake_options("gemm");
  o.model = "resnet18-small";
  o.batch = 8;
  knobs::layout.set(o.knobs, layout);
  knobs::fuse.set(o.knobs, fuse);
  return o;
}

TEST(FusionTraining, ResnetStepMatchesUnfused) {
  for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
    const std::string what = cat("resnet18-small ", to_string(layout));
    const OneStep unfused = train_one_step(resnet_options(layout, false));
    const OneStep fused = train_one_step(resnet_options(layout, true));
    expect_gradients_near(fused, unfused, what, 1e-5f);

    // Stem + one per block: bn1 + relu1; one per block: bn2 + add + relu2; the three
    // projection shortcuts keep a plain batch norm.
    EXPECT_EQ(kernel_count(fused, "bn_relu.fwd"), 9) << what;
    EXPECT_EQ(kernel_count(fused, "bn_relu.bwd"), 9) << what;
    EXPECT_EQ(kernel_count(fused, "bn_add_relu.fwd"), 8) << what;
    EXPECT_EQ(kernel_count(fused, "bn_add_relu.bwd"), 8) << what;
    EXPECT_EQ(kernel_count(fused, "bn.fwd"), 3) << what;
    for (const char* gone : {"relu.fwd", "relu.bwd", "add", "copy"})
      EXPECT_EQ(kernel_count(fused, gone), 0) << what << " " << gone;

    EXPECT_EQ(kernel_count(unfused, "bn_relu.fwd") + kernel_count(unfused, "bn_add_relu.fwd"), 0)
        << what;
    EXPECT_EQ(kernel_count(unfused, "bn.fwd"), 20) << what;
    EXPECT_EQ(kernel_count(unfused, "relu.fwd"), 17) << what;
    EXPECT_EQ(kernel_count(unfused, "add"), 8) << what;
  }
}

// lenet5 on its direct-small (NCHW) and direct convs: the fused layer holds conv1.bias and
// conv2.bias, so the parameters match by name and order.
TEST(FusionTraining, LenetStepMatchesUnfused) {
  for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
    const std::string what = cat("lenet5 ", to_string(layout));
    const auto options = [&](bool fuse) {
      SessionOptions o =
          test_support::lenet_fake_options(layout == Layout::NCHW ? "direct-small" : "direct");
      knobs::layout.set(o.knobs, layout);
      knobs::fuse.set(o.knobs, fuse);
      return o;
    };
    const OneStep unfused = train_one_step(options(false));
    const OneStep fused = train_one_step(options(true));
    expect_gradients_near(fused, unfused, what, 1e-5f);

    EXPECT_EQ(kernel_count(fused, "bias_relu_maxpool.fwd"), 2) << what;
    EXPECT_EQ(kernel_count(fused, "bias_relu_maxpool.bwd"), 2) << what;
    EXPECT_EQ(kernel_count(fused, "relu.fwd"), 2) << what;  // after fc1 and fc2
    for (const char* gone : {"maxpool.fwd", "maxpool.bwd", "bias.fwd", "bias.bwd"})
      EXPECT_EQ(kernel_count(fused, gone), 0) << what << " " << gone;

    EXPECT_EQ(kernel_count(unfused, "bias_relu_maxpool.fwd"), 0) << what;
    EXPECT_EQ(kernel_count(unfused, "relu.fwd"), 4) << what;
    EXPECT_EQ(kernel_count(unfused, "maxpool.fwd"), 2) << what;
  }
}

}  // namespace
}  // namespace tunescope
