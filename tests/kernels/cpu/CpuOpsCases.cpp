// The op cases shared by the layout, thread-count and tracer tests (see CpuOpsCases.h).
#include "CpuOpsCases.h"

#include "CpuOpsTestSupport.h"

namespace tunescope::cpu::testing {

namespace {

// 54k elements: above the kernels' parallel grain, with every dimension odd or uneven.
const Shape4 kShape{7, 24, 17, 19};
const Shape4 kParam{1, kShape.c, 1, 1};
const PoolParams kPool{.kernel_h = 3, .kernel_w = 3, .pad_h = 1, .pad_w = 1};
constexpr int64_t kOutputs = 10;
// Layout tolerance of ops that combine the same terms in the same order in both layouts.
constexpr double kSameOrder = 0.0;

Tensor scalar(double value) {
  Tensor t({1, 1, 1, 1}, Layout::NCHW);
  t.data()[0] = static_cast<float>(value);
  return t;
}

struct BatchNormInputs {
  Tensor x, gamma, beta, running_mean, running_var;
  explicit BatchNormInputs(Layout l)
      : x(random_tensor(kShape, l, 101, -1.0f, 3.0f)),
        gamma(random_tensor(kParam, l, 102, 0.5f, 1.5f)),
        beta(random_tensor(kParam, l, 103)),
        running_mean(random_tensor(kParam, l, 104)),
        running_var(random_tensor(kParam, l, 105, 0.5f, 2.0f)) {}
};

}  // namespace

std::vector<OpCase> op_cases() {
  std::vector<OpCase> cases;
  cases.push_back({"batchnorm_forward_train", {"bn.fwd"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    BatchNormInputs in(l);
    BatchNormSaved saved;
    Tensor y(kShape, l);
    ops.batchnorm_forward_train(ctx, {}, in.x, in.gamma, in.beta, in.running_mean, in.running_var, saved, y);
    return std::vector<Tensor>{y, in.running_mean, in.running_var, saved.mean, saved.inv_std};
  }});
  cases.push_back({"batchnorm_forward_infer", {"bn.fwd_infer"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    BatchNormInputs in(l);
    Tensor y(kShape, l);
    ops.batchnorm_forward_infer(ctx, {}, in.x, in.gamma, in.beta, in.running_mean, in.running_var, y);
    return std::vector<Tensor>{y};
  }});
  cases.push_back({"batchnorm_backward", {"bn.fwd", "bn.bwd"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    BatchNormInputs in(l);
    BatchNormSaved saved;
    Tensor y(kShape, l);
    ops.batchnorm_forward_train(ctx, {}, in.x, in.gamma, in.beta, in.running_mean, in.running_var, saved, y);
    Tensor dx(kShape, l), dgamma(kParam, l), dbeta(kParam, l);
    ops.batchnorm_backward(ctx, in.x, random_tensor(kShape, l, 106), in.gamma, saved, dx, dgamma, dbeta);
    return std::vector<Tensor>{dx, dgamma, dbeta};
  }});
  cases.push_back({"relu_forward", {"relu.fwd"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor y(kShape, l);
    ops.relu_forward(ctx, random_tensor(kShape, l, 107), y);
    return std::vector<Tensor>{y};
  }});
  cases.push_back({"relu_backward", {"relu.bwd"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor dx(kShape, l);
    ops.relu_backward(ctx, random_tensor(kShape, l, 108), random_tensor(kShape, l, 109), dx);
    return std::vector<Tensor>{dx};
  }});
  cases.push_back({"maxpool_forward", {"maxpool.fwd"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor y(kPool.output(kShape), l);
    ops.maxpool_forward(ctx, kPool, random_tensor(kShape, l, 110), y);
    return std::vector<Tensor>{y};
  }, kSameOrder});
  cases.push_back({"maxpool_backward", {"maxpool.bwd"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor dx(kShape, l);
    ops.maxpool_backward(ctx, kPool, random_tensor(kShape, l, 111),
                         random_tensor(kPool.output(kShape), l, 112), dx);
    return std::vector<Tensor>{dx};
  }, kSameOrder});
  cases.push_back({"avgpool_forward", {"avgpool.fwd"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor y(kPool.output(kShape), l);
    ops.avgpool_forward(ctx, kPool, random_tensor(kShape, l, 113), y);
    return std::vector<Tensor>{y};
  }, kSameOrder});
  cases.push_back({"avgpool_backward", {"avgpool.bwd"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor dx(kShape, l);
    ops.avgpool_backward(ctx, kPool, random_tensor(kPool.output(kShape), l, 114), dx);
    return std::vector<Tensor>{dx};
  }, kSameOrder});
  cases.push_back({"global_avgpool_forward", {"gap.fwd"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor y({kShape.n, kShape.c, 1, 1}, l);
    ops.global_avgpool_forward(ctx, random_tensor(kShape, l, 115), y);
    return std::vector<Tensor>{y};
  }});
  cases.push_back({"global_avgpool_backward", {"gap.bwd"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor dx(kShape, l);
    ops.global_avgpool_backward(ctx, random_tensor({kShape.n, kShape.c, 1, 1}, l, 116), dx);
    return std::vector<Tensor>{dx};
  }});
  const Shape4 weight_shape{kOutputs, kShape.c, kShape.h, kShape.w};
  const Shape4 fc_out{kShape.n, kOutputs, 1, 1};
  cases.push_back({"fc_forward", {"fc.fwd"}, [=](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor y(fc_out, l);
    ops.fc_forward(ctx, random_tensor(kShape, l, 117), random_tensor(weight_shape, l, 118),
                   random_tensor({1, kOutputs, 1, 1}, l, 119), y);
    return std::vector<Tensor>{y};
  },
  // Dot products of 7752 terms of mean magnitude 1/4, summed in another order: float
  // rounding bounds the difference by about 7752 * 2^-24 * 1/4 = 1.2e-4.
  2e-4});
  cases.push_back({"fc_backward_data", {"fc.bwd_data"}, [=](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor dx(kShape, l);
    ops.fc_backward_data(ctx, random_tensor(fc_out, l, 120), random_tensor(weight_shape, l, 121), dx);
    return std::vector<Tensor>{dx};
  }});
  cases.push_back({"fc_backward_weight", {"fc.bwd_weight"}, [=](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor dweight(weight_shape, l), dbias({1, kOutputs, 1, 1}, l);
    ops.fc_backward_weight(ctx, random_tensor(kShape, l, 122), random_tensor(fc_out, l, 123), dweight, dbias);
    return std::vector<Tensor>{dweight, dbias};
  }});
  cases.push_back({"bias_forward", {"bias.fwd"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor y = random_tensor(kShape, l, 124);
    ops.bias_forward(ctx, random_tensor(kParam, l, 125), y);
    return std::vector<Tensor>{y};
  }});
  cases.push_back({"bias_backward", {"bias.bwd"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor dbias(kParam, l);
    ops.bias_backward(ctx, random_tensor(kShape, l, 126), dbias);
    return std::vector<Tensor>{dbias};
  }});
  cases.push_back({"add", {"add"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor y(kShape, l);
    ops.add(ctx, random_tensor(kShape, l, 127), random_tensor(kShape, l, 128), y);
    return std::vector<Tensor>{y};
  }});
  cases.push_back({"accumulate", {"accumulate"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor y = random_tensor(kShape, l, 129);
    ops.accumulate(ctx, random_tensor(kShape, l, 130), y);
    return std::vector<Tensor>{y};
  }});
  cases.push_back({"zero", {"zero"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor y = random_tensor(kShape, l, 131);
    ops.zero(ctx, y);
    return std::vector<Tensor>{y};
  }});
  cases.push_back({"copy", {"copy"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor y(kShape, l);
    ops.copy(ctx, random_tensor(kShape, l, 132), y);
    return std::vector<Tensor>{y};
  }});
  cases.push_back({"softmax_cross_entropy", {"softmax_xent"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    const Shape4 shape{513, kOutputs, 1, 1};
    std::vector<int32_t> labels(shape.n);
    for (int64_t i = 0; i < shape.n; ++i) labels[i] = static_cast<int32_t>(i * 7 % kOutputs);
    Tensor dlogits(shape, l);
    int64_t correct = 0;
    const float loss = ops.softmax_cross_entropy(ctx, random_tensor(shape, l, 133, -4, 4), labels, &dlogits, &correct);
    return std::vector<Tensor>{dlogits, scalar(loss), scalar(static_cast<double>(correct))};
  }});
  cases.push_back({"sgd_update", {"sgd"}, [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    Tensor weight = random_tensor(kShape, l, 134);
    Tensor velocity = random_tensor(kShape, l, 135);
    ops.sgd_update(ctx, {.learning_rate = 0.05f, .momentum = 0.9f, .weight_decay = 1e-3f}, weight,
                   random_tensor(kShape, l, 136), velocity);
    return std::vector<Tensor>{weight, velocity};
  }});
  cases.push_back({"transpose", {"transpose.nchw_to_nhwc", "transpose.nhwc_to_nchw"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l) {
    const Tensor x = random_tensor(kShape, l, 137);
    Tensor there(kShape, l == Layout::NCHW ? Layout::NHWC : Layout::NCHW), back(kShape, l);
    ops.transpose(ctx, x, there);
    ops.transpose(ctx, there, back);
    return std::vector<Tensor>{there, back};
  }});
  return cases;
}

}  // namespace tunescope::cpu::testing
