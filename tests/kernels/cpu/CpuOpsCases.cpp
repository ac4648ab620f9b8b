// The op cases shared by the layout, thread-count and tracer tests (see CpuOpsCases.h).
#include "CpuOpsCases.h"

#include "CpuOpsTestSupport.h"

namespace tunescope::cpu::test_support {

namespace {

// 54k elements: above the kernels' parallel grain, with every dimension odd or uneven.
const Shape4 kShape{7, 24, 17, 19};
const Shape4 kParam{1, kShape.c, 1, 1};
const PoolParams kPool{.kernel_h = 3, .kernel_w = 3, .pad_h = 1, .pad_w = 1};
constexpr int64_t kOutputs = 10;
// Inputs are made on the host by logical index and placed in the memory under test;
// outputs come back to the host for comparison.
struct Placed {
  MemorySpace& memory;
  Tensor in(const Tensor& host) const { return to_memory(host, memory); }
  std::vector<Tensor> out(std::vector<Tensor> outputs) const {
    for (Tensor& t : outputs)
      if (!t.on_host()) t = to_host(t);
    return outputs;
  }
};
// Layout tolerance of ops that combine the same terms in the same order in both layouts.
constexpr double kSameOrder = 0.0;

Tensor scalar(double value) {
  Tensor t({1, 1, 1, 1}, Layout::NCHW);
  t.data()[0] = static_cast<float>(value);
  return t;
}

struct BatchNormInputs {
  Tensor x, gamma, beta, running_mean, running_var;
  BatchNormInputs(Layout l, const Placed& m)
      : x(m.in(random_tensor(kShape, l, 101, -1.0f, 3.0f))),
        gamma(m.in(random_tensor(kParam, l, 102, 0.5f, 1.5f))),
        beta(m.in(random_tensor(kParam, l, 103))),
        running_mean(m.in(random_tensor(kParam, l, 104))),
        running_var(m.in(random_tensor(kParam, l, 105, 0.5f, 2.0f))) {}
};

}  // namespace

std::vector<OpCase> op_cases() {
  std::vector<OpCase> cases;
  cases.push_back({"batchnorm_forward_train",
                   {"bn.fwd"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     BatchNormInputs in(l, m);
                     BatchNormSaved saved;
                     Tensor y(kShape, l, m.memory);
                     ops.batchnorm_forward_train(ctx, {}, in.x, in.gamma, in.beta, in.running_mean,
                                                 in.running_var, saved, y);
                     return m.out({y, in.running_mean, in.running_var, saved.mean, saved.inv_std});
                   }});
  cases.push_back({"batchnorm_forward_infer",
                   {"bn.fwd_infer"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     BatchNormInputs in(l, m);
                     Tensor y(kShape, l, m.memory);
                     ops.batchnorm_forward_infer(ctx, {}, in.x, in.gamma, in.beta, in.running_mean,
                                                 in.running_var, y);
                     return m.out({y});
                   }});
  cases.push_back({"batchnorm_backward",
                   {"bn.fwd", "bn.bwd"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     BatchNormInputs in(l, m);
                     BatchNormSaved saved;
                     Tensor y(kShape, l, m.memory);
                     ops.batchnorm_forward_train(ctx, {}, in.x, in.gamma, in.beta, in.running_mean,
                                                 in.running_var, saved, y);
                     Tensor dx(kShape, l, m.memory), dgamma(kParam, l, m.memory),
                         dbeta(kParam, l, m.memory);
                     ops.batchnorm_backward(ctx, in.x, m.in(random_tensor(kShape, l, 106)),
                                            in.gamma, saved, dx, dgamma, dbeta);
                     return m.out({dx, dgamma, dbeta});
                   }});
  cases.push_back({"relu_forward",
                   {"relu.fwd"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor y(kShape, l, m.memory);
                     ops.relu_forward(ctx, m.in(random_tensor(kShape, l, 107)), y);
                     return m.out({y});
                   }});
  cases.push_back({"relu_backward",
                   {"relu.bwd"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor dx(kShape, l, m.memory);
                     ops.relu_backward(ctx, m.in(random_tensor(kShape, l, 108)),
                                       m.in(random_tensor(kShape, l, 109)), dx);
                     return m.out({dx});
                   }});
  cases.push_back({"maxpool_forward",
                   {"maxpool.fwd"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor y(kPool.output(kShape), l, m.memory);
                     ops.maxpool_forward(ctx, kPool, m.in(random_tensor(kShape, l, 110)), y);
                     return m.out({y});
                   },
                   kSameOrder});
  cases.push_back({"maxpool_backward",
                   {"maxpool.bwd"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor dx(kShape, l, m.memory);
                     ops.maxpool_backward(ctx, kPool, m.in(random_tensor(kShape, l, 111)),
                                          m.in(random_tensor(kPool.output(kShape), l, 112)), dx);
                     return m.out({dx});
                   },
                   kSameOrder});
  cases.push_back({"avgpool_forward",
                   {"avgpool.fwd"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor y(kPool.output(kShape), l, m.memory);
                     ops.avgpool_forward(ctx, kPool, m.in(random_tensor(kShape, l, 113)), y);
                     return m.out({y});
                   },
                   kSameOrder});
  cases.push_back({"avgpool_backward",
                   {"avgpool.bwd"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor dx(kShape, l, m.memory);
                     ops.avgpool_backward(ctx, kPool,
                                          m.in(random_tensor(kPool.output(kShape), l, 114)), dx);
                     return m.out({dx});
                   },
                   kSameOrder});
  cases.push_back({"global_avgpool_forward",
                   {"gap.fwd"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor y({kShape.n, kShape.c, 1, 1}, l, m.memory);
                     ops.global_avgpool_forward(ctx, m.in(random_tensor(kShape, l, 115)), y);
                     return m.out({y});
                   }});
  cases.push_back({"global_avgpool_backward",
                   {"gap.bwd"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor dx(kShape, l, m.memory);
                     ops.global_avgpool_backward(
                         ctx, m.in(random_tensor({kShape.n, kShape.c, 1, 1}, l, 116)), dx);
                     return m.out({dx});
                   }});
  const Shape4 weight_shape{kOutputs, kShape.c, kShape.h, kShape.w};
  const Shape4 fc_out{kShape.n, kOutputs, 1, 1};
  cases.push_back({"fc_forward",
                   {"fc.fwd"},
                   [=](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor y(fc_out, l, m.memory);
                     ops.fc_forward(ctx, m.in(random_tensor(kShape, l, 117)),
                                    m.in(random_tensor(weight_shape, l, 118)),
                                    m.in(random_tensor({1, kOutputs, 1, 1}, l, 119)), y);
                     return m.out({y});
                   },
                   // Dot products of 7752 terms of mean magnitude 1/4, summed in another order:
                   // float rounding bounds the difference by about 7752 * 2^-24 * 1/4 = 1.2e-4.
                   2e-4,
                   2e-4});
  cases.push_back({"fc_backward_data",
                   {"fc.bwd_data"},
                   [=](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor dx(kShape, l, m.memory);
                     ops.fc_backward_data(ctx, m.in(random_tensor(fc_out, l, 120)),
                                          m.in(random_tensor(weight_shape, l, 121)), dx);
                     return m.out({dx});
                   }});
  cases.push_back(
      {"fc_backward_weight",
       {"fc.bwd_weight"},
       [=](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
         const Placed m{memory};
         Tensor dweight(weight_shape, l, m.memory), dbias({1, kOutputs, 1, 1}, l, m.memory);
         ops.fc_backward_weight(ctx, m.in(random_tensor(kShape, l, 122)),
                                m.in(random_tensor(fc_out, l, 123)), dweight, dbias);
         return m.out({dweight, dbias});
       }});
  cases.push_back({"bias_forward",
                   {"bias.fwd"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor y = m.in(random_tensor(kShape, l, 124));
                     ops.bias_forward(ctx, m.in(random_tensor(kParam, l, 125)), y);
                     return m.out({y});
                   }});
  cases.push_back({"bias_backward",
                   {"bias.bwd"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor dbias(kParam, l, m.memory);
                     ops.bias_backward(ctx, m.in(random_tensor(kShape, l, 126)), dbias);
                     return m.out({dbias});
                   }});
  cases.push_back(
      {"add", {"add"}, [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
         const Placed m{memory};
         Tensor y(kShape, l, m.memory);
         ops.add(ctx, m.in(random_tensor(kShape, l, 127)), m.in(random_tensor(kShape, l, 128)), y);
         return m.out({y});
       }});
  cases.push_back({"accumulate",
                   {"accumulate"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor y = m.in(random_tensor(kShape, l, 129));
                     ops.accumulate(ctx, m.in(random_tensor(kShape, l, 130)), y);
                     return m.out({y});
                   }});
  cases.push_back(
      {"zero", {"zero"}, [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
         const Placed m{memory};
         Tensor y = m.in(random_tensor(kShape, l, 131));
         ops.zero(ctx, y);
         return m.out({y});
       }});
  cases.push_back(
      {"copy", {"copy"}, [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
         const Placed m{memory};
         Tensor y(kShape, l, m.memory);
         ops.copy(ctx, m.in(random_tensor(kShape, l, 132)), y);
         return m.out({y});
       }});
  cases.push_back({"softmax_cross_entropy",
                   {"softmax_xent"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     const Shape4 shape{513, kOutputs, 1, 1};
                     std::vector<int32_t> labels(shape.n);
                     for (int64_t i = 0; i < shape.n; ++i)
                       labels[i] = static_cast<int32_t>(i * 7 % kOutputs);
                     Tensor dlogits(shape, l, m.memory);
                     int64_t correct = 0;
                     const float loss =
                         ops.softmax_cross_entropy(ctx, m.in(random_tensor(shape, l, 133, -4, 4)),
                                                   labels, &dlogits, &correct);
                     return m.out({dlogits, scalar(loss), scalar(static_cast<double>(correct))});
                   }});
  cases.push_back({"sgd_update",
                   {"sgd"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor weight = m.in(random_tensor(kShape, l, 134));
                     Tensor velocity = m.in(random_tensor(kShape, l, 135));
                     ops.sgd_update(
                         ctx, {.learning_rate = 0.05f, .momentum = 0.9f, .weight_decay = 1e-3f},
                         weight, m.in(random_tensor(kShape, l, 136)), velocity);
                     return m.out({weight, velocity});
                   }});
  cases.push_back({"transpose",
                   {"transpose.nchw_to_nhwc", "transpose.nhwc_to_nchw"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     const Tensor x = m.in(random_tensor(kShape, l, 137));
                     Tensor there(kShape, l == Layout::NCHW ? Layout::NHWC : Layout::NCHW,
                                  m.memory),
                         back(kShape, l, m.memory);
                     ops.transpose(ctx, x, there);
                     ops.transpose(ctx, there, back);
                     return m.out({there, back});
                   }});
  return cases;
}

std::vector<OpCase> collective_cases() {
  std::vector<OpCase> cases;
  const Shape4 batch_shape{kShape.n, kShape.c, kShape.h, kShape.w};
  const Shape4 shard_shape{3, kShape.c, kShape.h, kShape.w};
  cases.push_back({"scatter_rows",
                   {"scatter"},
                   [=](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     const Tensor host_batch = random_tensor(batch_shape, l, 140);
                     const Tensor batch = m.in(host_batch);
                     // Rows 3..5 from the host (the upload of a batch); rows 6.. from device
                     // memory: a partial last shard whose last two rows must come out zero.
                     Tensor full(shard_shape, l, m.memory),
                         partial = m.in(random_tensor(shard_shape, l, 141));
                     ops.scatter_rows(ctx, host_batch, 3, full);
                     ops.scatter_rows(ctx, batch, 6, partial);
                     return m.out({full, partial});
                   },
                   kSameOrder,
                   kSameOrder});
  cases.push_back({"allreduce_sum",
                   {"allreduce"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     Tensor a = m.in(random_tensor(kShape, l, 142));
                     const Tensor b = m.in(random_tensor(kShape, l, 143)),
                                  c = m.in(random_tensor(kShape, l, 144));
                     const Tensor* sources[] = {&a, &b, &c};
                     ops.allreduce_sum(ctx, sources, 1.0f / 3.0f,
                                       a);  // out is the first source, as replicas use it
                     return m.out({a});
                   },
                   kSameOrder,
                   kSameOrder});
  cases.push_back({"broadcast",
                   {"broadcast"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     const Tensor source = m.in(random_tensor(kShape, l, 145));
                     Tensor first(kShape, l, m.memory),
                         second = m.in(random_tensor(kShape, l, 146));
                     Tensor* targets[] = {&first, &second};
                     ops.broadcast(ctx, source, targets);
                     return m.out({first, second});
                   },
                   kSameOrder,
                   kSameOrder});
  // The update on the host: a gradient down into a host tensor, a weight back up.
  cases.push_back({"host copies",
                   {"memcpy.dtoh", "memcpy.htod"},
                   [](OpKernels& ops, const ExecContext& ctx, Layout l, MemorySpace& memory) {
                     const Placed m{memory};
                     const Tensor grad = m.in(random_tensor(kShape, l, 147));
                     Tensor host_grad(kShape, l), weight(kShape, l, m.memory);
                     const Tensor host_weight = random_tensor(kShape, l, 148);
                     ops.copy_to_host(ctx, grad, host_grad);
                     ops.copy_from_host(ctx, host_weight, weight);
                     return m.out({host_grad, weight});
                   },
                   kSameOrder,
                   kSameOrder});
  return cases;
}

}  // namespace tunescope::cpu::test_support
