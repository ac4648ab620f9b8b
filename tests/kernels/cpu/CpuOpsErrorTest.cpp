// Bad arguments to the CPU op kernels throw tunescope::Error with the op name and the
// offending shapes, and out-of-range labels are input errors naming index and value.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/Error.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuOps.h"

namespace tunescope::cpu::testing {
namespace {

class CpuOpsErrors : public ::testing::Test {
 protected:
  // Runs f, expecting an Error of `kind` whose message contains every fragment.
  template <typename F>
  void expect_error(ErrorKind kind, std::vector<std::string> fragments, F f) {
    try {
      f();
      ADD_FAILURE() << "no error thrown (expected one mentioning '" << fragments.front() << "')";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      for (const auto& fragment : fragments)
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
            << "'" << e.what() << "' lacks '" << fragment << "'";
    }
  }

  ThreadPool pool{1};
  ExecContext ctx{pool};
  CpuOps ops;
  const Shape4 shape{2, 3, 4, 5};
  const Shape4 param{1, 3, 1, 1};
  Tensor x{shape, Layout::NCHW};
};

TEST_F(CpuOpsErrors, BatchNormShapes) {
  Tensor gamma(param, Layout::NCHW), beta(param, Layout::NCHW), rm(param, Layout::NCHW),
      rv(param, Layout::NCHW);
  BatchNormSaved saved;
  Tensor wrong_y({2, 3, 4, 6}, Layout::NCHW);
  expect_error(ErrorKind::runtime, {"bn.fwd", "2x3x4x6", "2x3x4x5"}, [&] {
    ops.batchnorm_forward_train(ctx, {}, x, gamma, beta, rm, rv, saved, wrong_y);
  });
  Tensor y(shape, Layout::NCHW), short_gamma({1, 2, 1, 1}, Layout::NCHW);
  expect_error(ErrorKind::runtime, {"bn.fwd_infer", "gamma", "1x2x1x1"}, [&] {
    ops.batchnorm_forward_infer(ctx, {}, x, short_gamma, beta, rm, rv, y);
  });
  ops.batchnorm_forward_train(ctx, {}, x, gamma, beta, rm, rv, saved, y);
  Tensor dy_nhwc(shape, Layout::NHWC), dx(shape, Layout::NCHW), dgamma(param, Layout::NCHW),
      dbeta(param, Layout::NCHW);
  expect_error(ErrorKind::runtime, {"bn.bwd", "dy", "nhwc"}, [&] {
    ops.batchnorm_backward(ctx, x, dy_nhwc, gamma, saved, dx, dgamma, dbeta);
  });
}

TEST_F(CpuOpsErrors, ElementwiseShapesAndLayouts) {
  Tensor small({2, 3, 4, 4}, Layout::NCHW), nhwc(shape, Layout::NHWC), y(shape, Layout::NCHW);
  expect_error(ErrorKind::runtime, {"relu.fwd", "2x3x4x4"}, [&] { ops.relu_forward(ctx, x, small); });
  expect_error(ErrorKind::runtime, {"add", "nhwc"}, [&] { ops.add(ctx, x, nhwc, y); });
  expect_error(ErrorKind::runtime, {"accumulate"}, [&] { ops.accumulate(ctx, small, y); });
  expect_error(ErrorKind::runtime, {"copy"}, [&] { ops.copy(ctx, x, nhwc); });
  Tensor bias({1, 4, 1, 1}, Layout::NCHW);
  expect_error(ErrorKind::runtime, {"bias.fwd", "1x4x1x1", "1x3x1x1"}, [&] { ops.bias_forward(ctx, bias, y); });
  Tensor weight(shape, Layout::NCHW), grad(shape, Layout::NCHW), velocity({2, 3, 4, 4}, Layout::NCHW);
  expect_error(ErrorKind::runtime, {"sgd", "velocity"}, [&] {
    ops.sgd_update(ctx, {}, weight, grad, velocity);
  });
  Tensor unallocated;
  expect_error(ErrorKind::runtime, {"zero", "empty"}, [&] { ops.zero(ctx, unallocated); });
}

TEST_F(CpuOpsErrors, PoolingShapesAndPadding) {
  Tensor y({2, 3, 3, 3}, Layout::NCHW);  // a 2x2/2 pool of 4x5 gives 2x2
  expect_error(ErrorKind::runtime, {"maxpool.fwd", "2x3x3x3", "2x3x2x2"}, [&] {
    ops.maxpool_forward(ctx, PoolParams{}, x, y);
  });
  const PoolParams all_padding{.kernel_h = 2, .kernel_w = 2, .pad_h = 2, .pad_w = 0};
  Tensor y2(all_padding.output(shape), Layout::NCHW);
  expect_error(ErrorKind::runtime, {"avgpool.fwd", "padding"}, [&] {
    ops.avgpool_forward(ctx, all_padding, x, y2);
  });
  Tensor gap_y({2, 3, 1, 1}, Layout::NHWC);
  expect_error(ErrorKind::runtime, {"gap.fwd", "nhwc"}, [&] { ops.global_avgpool_forward(ctx, x, gap_y); });
}

TEST_F(CpuOpsErrors, FullyConnectedShapesAndLayouts) {
  Tensor weight_nhwc({10, 3, 4, 5}, Layout::NHWC), bias({1, 10, 1, 1}, Layout::NCHW),
      y({2, 10, 1, 1}, Layout::NCHW);
  expect_error(ErrorKind::runtime, {"fc.fwd", "weight", "nhwc", "nchw"}, [&] {
    ops.fc_forward(ctx, x, weight_nhwc, bias, y);
  });
  Tensor weight({10, 3, 4, 5}, Layout::NCHW), y_short({2, 9, 1, 1}, Layout::NCHW);
  expect_error(ErrorKind::runtime, {"fc.fwd", "2x9x1x1", "2x10x1x1"}, [&] {
    ops.fc_forward(ctx, x, weight, bias, y_short);
  });
  Tensor dx({2, 3, 5, 4}, Layout::NCHW);
  expect_error(ErrorKind::runtime, {"fc.bwd_data", "OUTx3x5x4"}, [&] { ops.fc_backward_data(ctx, y, weight, dx); });
}

TEST_F(CpuOpsErrors, SoftmaxLabels) {
  const Tensor logits({3, 4, 1, 1}, Layout::NCHW);
  for (int32_t bad : {-1, 4}) {
    const std::vector<int32_t> labels{0, bad, 2};
    expect_error(ErrorKind::input, {"softmax_xent", "label 1", std::to_string(bad)}, [&] {
      ops.softmax_cross_entropy(ctx, logits, labels, nullptr, nullptr);
    });
  }
  expect_error(ErrorKind::runtime, {"softmax_xent", "2 labels", "batch of 3"}, [&] {
    ops.softmax_cross_entropy(ctx, logits, std::vector<int32_t>{0, 1}, nullptr, nullptr);
  });
  expect_error(ErrorKind::runtime, {"softmax_xent", "2x3x4x5"}, [&] {
    ops.softmax_cross_entropy(ctx, x, std::vector<int32_t>{0, 1}, nullptr, nullptr);
  });
}

TEST_F(CpuOpsErrors, TransposeNeedsTheOtherLayout) {
  Tensor y(shape, Layout::NCHW);
  expect_error(ErrorKind::runtime, {"transpose", "nchw"}, [&] { ops.transpose(ctx, x, y); });
  Tensor wrong({2, 3, 5, 4}, Layout::NHWC);
  expect_error(ErrorKind::runtime, {"transpose", "2x3x5x4"}, [&] { ops.transpose(ctx, x, wrong); });
}

}  // namespace
}  // namespace tunescope::cpu::testing
