// Bad arguments to any backend's op kernels throw tunescope::Error with the op name and
// the offending shapes, and out-of-range labels are input errors naming index and value.
// A typed suite: each backend's test program instantiates it with its ops class
// (CpuOpsErrorTest.cpp, tests/kernels/cuda/CudaOpsErrorTest.cpp). The checks run on the
// host before any kernel, so host tensors serve for every backend.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/Error.h"
#include "core/base/OpKernels.h"
#include "core/base/ThreadPool.h"
#include "tests/core/ExpectError.h"

namespace tunescope::test_support {

template <typename Ops>
class OpsErrors : public ::testing::Test {
 protected:
  // The shared assertion (tests/core/ExpectError.h), with the fragments first so that
  // the long op call reads last.
  template <typename F>
  void expect_error(ErrorKind kind, std::initializer_list<std::string> fragments, F f) {
    test_support::expect_error(kind, f, fragments);
  }

  ThreadPool pool{1};
  ExecContext ctx{pool};
  Ops ops;
  const Shape4 shape{2, 3, 4, 5};
  const Shape4 param{1, 3, 1, 1};
  Tensor x{shape, Layout::NCHW};
};

TYPED_TEST_SUITE_P(OpsErrors);

TYPED_TEST_P(OpsErrors, BatchNormShapes) {
  Tensor gamma(this->param, Layout::NCHW), beta(this->param, Layout::NCHW),
      rm(this->param, Layout::NCHW), rv(this->param, Layout::NCHW);
  BatchNormSaved saved;
  Tensor wrong_y({2, 3, 4, 6}, Layout::NCHW);
  this->expect_error(ErrorKind::runtime, {"bn.fwd", "2x3x4x6", "2x3x4x5"}, [&] {
    this->ops.batchnorm_forward_train(this->ctx, {}, this->x, gamma, beta, rm, rv, saved, wrong_y);
  });
  Tensor y(this->shape, Layout::NCHW), short_gamma({1, 2, 1, 1}, Layout::NCHW);
  this->expect_error(ErrorKind::runtime, {"bn.fwd_infer", "gamma", "1x2x1x1"}, [&] {
    this->ops.batchnorm_forward_infer(this->ctx, {}, this->x, short_gamma, beta, rm, rv, y);
  });
  saved.mean = Tensor(this->param, Layout::NCHW);
  saved.inv_std = Tensor(this->param, Layout::NCHW);
  Tensor dy_nhwc(this->shape, Layout::NHWC), dx(this->shape, Layout::NCHW),
      dgamma(this->param, Layout::NCHW), dbeta(this->param, Layout::NCHW);
  this->expect_error(ErrorKind::runtime, {"bn.bwd", "dy", "nhwc"}, [&] {
    this->ops.batchnorm_backward(this->ctx, this->x, dy_nhwc, gamma, saved, dx, dgamma, dbeta);
  });
}

TYPED_TEST_P(OpsErrors, ElementwiseShapesAndLayouts) {
  Tensor small({2, 3, 4, 4}, Layout::NCHW), nhwc(this->shape, Layout::NHWC),
      y(this->shape, Layout::NCHW);
  this->expect_error(ErrorKind::runtime, {"relu.fwd", "2x3x4x4"},
                     [&] { this->ops.relu_forward(this->ctx, this->x, small); });
  this->expect_error(ErrorKind::runtime, {"add", "nhwc"},
                     [&] { this->ops.add(this->ctx, this->x, nhwc, y); });
  this->expect_error(ErrorKind::runtime, {"accumulate"},
                     [&] { this->ops.accumulate(this->ctx, small, y); });
  this->expect_error(ErrorKind::runtime, {"copy"},
                     [&] { this->ops.copy(this->ctx, this->x, nhwc); });
  Tensor bias({1, 4, 1, 1}, Layout::NCHW);
  this->expect_error(ErrorKind::runtime, {"bias.fwd", "1x4x1x1", "1x3x1x1"},
                     [&] { this->ops.bias_forward(this->ctx, bias, y); });
  Tensor weight(this->shape, Layout::NCHW), grad(this->shape, Layout::NCHW),
      velocity({2, 3, 4, 4}, Layout::NCHW);
  this->expect_error(ErrorKind::runtime, {"sgd", "velocity"},
                     [&] { this->ops.sgd_update(this->ctx, {}, weight, grad, velocity); });
  Tensor unallocated;
  this->expect_error(ErrorKind::runtime, {"zero", "empty"},
                     [&] { this->ops.zero(this->ctx, unallocated); });
}

TYPED_TEST_P(OpsErrors, PoolingShapesAndPadding) {
  Tensor y({2, 3, 3, 3}, Layout::NCHW);  // a 2x2/2 pool of 4x5 gives 2x2
  this->expect_error(ErrorKind::runtime, {"maxpool.fwd", "2x3x3x3", "2x3x2x2"},
                     [&] { this->ops.maxpool_forward(this->ctx, PoolParams{}, this->x, y); });
  const PoolParams all_padding{.kernel_h = 2, .kernel_w = 2, .pad_h = 2, .pad_w = 0};
  Tensor y2(all_padding.output(this->shape), Layout::NCHW);
  this->expect_error(ErrorKind::runtime, {"avgpool.fwd", "padding"},
                     [&] { this->ops.avgpool_forward(this->ctx, all_padding, this->x, y2); });
  Tensor gap_y({2, 3, 1, 1}, Layout::NHWC);
  this->expect_error(ErrorKind::runtime, {"gap.fwd", "nhwc"},
                     [&] { this->ops.global_avgpool_forward(this->ctx, this->x, gap_y); });
}

TYPED_TEST_P(OpsErrors, FullyConnectedShapesAndLayouts) {
  Tensor weight_nhwc({10, 3, 4, 5}, Layout::NHWC), bias({1, 10, 1, 1}, Layout::NCHW),
      y({2, 10, 1, 1}, Layout::NCHW);
  this->expect_error(ErrorKind::runtime, {"fc.fwd", "weight", "nhwc", "nchw"},
                     [&] { this->ops.fc_forward(this->ctx, this->x, weight_nhwc, bias, y); });
  Tensor weight({10, 3, 4, 5}, Layout::NCHW), y_short({2, 9, 1, 1}, Layout::NCHW);
  this->expect_error(ErrorKind::runtime, {"fc.fwd", "2x9x1x1", "2x10x1x1"},
                     [&] { this->ops.fc_forward(this->ctx, this->x, weight, bias, y_short); });
  Tensor dx({2, 3, 5, 4}, Layout::NCHW);
  this->expect_error(ErrorKind::runtime, {"fc.bwd_data", "OUTx3x5x4"},
                     [&] { this->ops.fc_backward_data(this->ctx, y, weight, dx); });
}

TYPED_TEST_P(OpsErrors, SoftmaxLabels) {
  const Tensor logits({3, 4, 1, 1}, Layout::NCHW);
  for (int32_t bad : {-1, 4}) {
    const std::vector<int32_t> labels{0, bad, 2};
    this->expect_error(ErrorKind::input, {"softmax_xent", "label 1", std::to_string(bad)}, [&] {
      this->ops.softmax_cross_entropy(this->ctx, logits, labels, nullptr, nullptr);
    });
  }
  this->expect_error(ErrorKind::runtime, {"softmax_xent", "2 labels", "batch of 3"}, [&] {
    this->ops.softmax_cross_entropy(this->ctx, logits, std::vector<int32_t>{0, 1}, nullptr,
                                    nullptr);
  });
  this->expect_error(ErrorKind::runtime, {"softmax_xent", "2x3x4x5"}, [&] {
    this->ops.softmax_cross_entropy(this->ctx, this->x, std::vector<int32_t>{0, 1}, nullptr,
                                    nullptr);
  });
}

TYPED_TEST_P(OpsErrors, TransposeNeedsTheOtherLayout) {
  Tensor y(this->shape, Layout::NCHW);
  this->expect_error(ErrorKind::runtime, {"transpose", "nchw"},
                     [&] { this->ops.transpose(this->ctx, this->x, y); });
  Tensor wrong({2, 3, 5, 4}, Layout::NHWC);
  this->expect_error(ErrorKind::runtime, {"transpose", "2x3x5x4"},
                     [&] { this->ops.transpose(this->ctx, this->x, wrong); });
}

TYPED_TEST_P(OpsErrors, CollectivesShapes) {
  Tensor shard({1, 3, 4, 4}, Layout::NCHW);
  this->expect_error(ErrorKind::runtime, {"scatter", "2x3x4x5", "1x3x4x4"},
                     [&] { this->ops.scatter_rows(this->ctx, this->x, 0, shard); });
  Tensor fits({1, 3, 4, 5}, Layout::NCHW);
  this->expect_error(ErrorKind::runtime, {"scatter", "rows from 2"},
                     [&] { this->ops.scatter_rows(this->ctx, this->x, 2, fits); });
  Tensor out(this->shape, Layout::NHWC);
  const Tensor* sources[] = {&this->x};
  this->expect_error(ErrorKind::runtime, {"allreduce", "nchw", "nhwc"},
                     [&] { this->ops.allreduce_sum(this->ctx, sources, 1.0f, out); });
  this->expect_error(ErrorKind::runtime, {"allreduce", "no sources"},
                     [&] { this->ops.allreduce_sum(this->ctx, {}, 1.0f, out); });
  Tensor* targets[] = {&shard};
  this->expect_error(ErrorKind::runtime, {"broadcast", "1x3x4x4"},
                     [&] { this->ops.broadcast(this->ctx, this->x, targets); });
}

REGISTER_TYPED_TEST_SUITE_P(OpsErrors, CollectivesShapes, BatchNormShapes,
                            ElementwiseShapesAndLayouts, PoolingShapesAndPadding,
                            FullyConnectedShapesAndLayouts, SoftmaxLabels,
                            TransposeNeedsTheOtherLayout);

}  // namespace tunescope::test_support
