// Memory speed of the elementwise work of a training step:
// - "triad/64": a STREAM-like triad a[i] = b[i] + s * c[i] over three 64 MiB arrays on
//   our ThreadPool, the machine's measured memory bandwidth (bytes counted as STREAM does:
//   two reads and one write per element, no write-allocate); "triad/4" the same on three
//   4 MiB arrays, the bandwidth of a last-level cache that holds them;
// - the batch-norm / ReLU / add kernels, fused and unfused, on resnet18-small's largest
//   activation at batch 128 ({128, 16, 32, 32}, 8 MiB), in both layouts, on every
//   instruction-set path this CPU runs, each reporting the bytes its trace record
//   declares (bytes_per_second), so they read directly against the triads. Each loops on
//   the same tensors (3 to 5 of 8 MiB), so with a large last-level cache part of them
//   stays there: compare with both triads.
// - LeNet-5's fused conv bias + ReLU + max pool at batch 256 (both pools, both passes).
// Threads: --threads=N or TUNESCOPE_BENCH_THREADS=N (default: hardware concurrency).
// Names are <kernel>/<layout>/<isa>; filter with --benchmark_filter.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench/BenchMain.h"
#include "core/base/AlignedBuffer.h"
#include "core/base/Tensor.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuIsa.h"
#include "kernels/cpu/CpuOps.h"
#include "kernels/cpu/ElementwiseIsa.h"

namespace tunescope {
namespace {

int g_threads = 1;

ThreadPool& pool() {
  static ThreadPool shared(g_threads);
  return shared;
}

// state.range(0): MiB per array.
void triad(benchmark::State& state) {
  const int64_t n = state.range(0) << 18;
  std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f);
  const float s = 3.0f;
  float* ad = a.data();
  const float* bd = b.data();
  const float* cd = c.data();
  auto run = [&] {
    pool().parallel_for(
        n,
        [=](int64_t first, int64_t last) {
          for (int64_t i = first; i < last; ++i) ad[i] = bd[i] + s * cd[i];
        },
        int64_t{1} << 16);
  };
  run();  // first touch
  for (auto _ : state) {
    run();
    benchmark::DoNotOptimize(ad);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 3 * n * static_cast<int64_t>(sizeof(float)));
}

Tensor filled(const Shape4& s, Layout layout, uint32_t seed) {
  Tensor t(s, layout);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = dist(rng);
  return t;
}

// The tensors of one batch-norm + ReLU site and the ops on them.
struct Site {
  explicit Site(Layout layout)
      : x(filled(kShape, layout, 1)),
        r(filled(kShape, layout, 2)),
        dy(filled(kShape, layout, 3)),
        y(kShape, layout),
        dx(kShape, layout),
        g(kShape, layout),
        gamma(kChannels, layout),
        beta(kChannels, layout),
        rm(kChannels, layout),
        rv(kChannels, layout),
        dgamma(kChannels, layout),
        dbeta(kChannels, layout) {
    gamma.fill(1.0f);
    rv.fill(1.0f);
    ops.batchnorm_relu_forward_train(ctx, {}, x, gamma, beta, &r, rm, rv, saved, y);
  }
  static constexpr Shape4 kShape{128, 16, 32, 32};
  static constexpr Shape4 kChannels{1, 16, 1, 1};
  Tensor x, r, dy, y, dx, g, gamma, beta, rm, rv, dgamma, dbeta;
  BatchNormSaved saved;
  cpu::CpuOps ops;
  ExecContext ctx{pool()};
};

struct KernelCase {
  const char* name;
  double tensors;  // tensor-sized reads and writes, as the kernel's trace record counts them
  std::function<void(Site&)> run;
};

const std::vector<KernelCase>& kernel_cases() {
  static const std::vector<KernelCase> cases = {
      {"relu.fwd", 2, [](Site& s) { s.ops.relu_forward(s.ctx, s.x, s.y); }},
      {"relu.bwd", 3, [](Site& s) { s.ops.relu_backward(s.ctx, s.y, s.dy, s.dx); }},
      {"add", 3, [](Site& s) { s.ops.add(s.ctx, s.x, s.r, s.y); }},
      {"bn.fwd", 3,
       [](Site& s) {
         s.ops.batchnorm_forward_train(s.ctx, {}, s.x, s.gamma, s.beta, s.rm, s.rv, s.saved, s.y);
       }},
      {"bn.bwd", 5,
       [](Site& s) {
         s.ops.batchnorm_backward(s.ctx, s.x, s.dy, s.gamma, s.saved, s.dx, s.dgamma, s.dbeta);
       }},
      {"bn_relu.fwd", 3,
       [](Site& s) {
         s.ops.batchnorm_relu_forward_train(s.ctx, {}, s.x, s.gamma, s.beta, nullptr, s.rm, s.rv,
                                            s.saved, s.y);
       }},
      {"bn_relu.bwd", 7,
       [](Site& s) {
         s.ops.batchnorm_relu_backward(s.ctx, s.x, s.y, s.dy, s.gamma, s.saved, s.dx, s.dgamma,
                                       s.dbeta, nullptr);
       }},
      {"bn_add_relu.fwd", 4,
       [](Site& s) {
         s.ops.batchnorm_relu_forward_train(s.ctx, {}, s.x, s.gamma, s.beta, &s.r, s.rm, s.rv,
                                            s.saved, s.y);
       }},
      {"bn_add_relu.bwd", 8,
       [](Site& s) {
         s.ops.batchnorm_relu_backward(s.ctx, s.x, s.y, s.dy, s.gamma, s.saved, s.dx, s.dgamma,
                                       s.dbeta, &s.g);
       }},
  };
  return cases;
}

void run_kernel(benchmark::State& state, const KernelCase& k, Layout layout, cpu::CpuIsa isa) {
  setenv(cpu::kElementwiseIsaVariable, cpu::to_string(isa), 1);
  Site site(layout);
  k.run(site);  // warm
  for (auto _ : state) k.run(site);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * k.tensors * site.x.bytes()));
  unsetenv(cpu::kElementwiseIsaVariable);
}

// LeNet-5's fused conv bias + ReLU + 2 x 2 max pool at batch 256: pool1 on conv1's
// {256, 6, 28, 28}, pool2 on conv2's {256, 16, 10, 10}. Bytes as their trace records
// declare them: forward x + y, backward 2 x + 2 dy.
struct PoolSite {
  PoolSite(const Shape4& in, Layout layout)
      : x(filled(in, layout, 4)),
        bias(filled({1, in.c, 1, 1}, layout, 5)),
        y(params.output(in), layout),
        dy(filled(params.output(in), layout, 6)),
        dx(in, layout),
        dbias(bias) {
    ops.bias_relu_maxpool_forward(ctx, params, x, bias, y);
  }
  PoolParams params{};
  Tensor x, bias, y, dy, dx, dbias;
  cpu::CpuOps ops;
  ExecContext ctx{pool()};
};

void run_pool(benchmark::State& state, const Shape4& in, bool backward, Layout layout,
              cpu::CpuIsa isa) {
  setenv(cpu::kElementwiseIsaVariable, cpu::to_string(isa), 1);
  PoolSite s(in, layout);
  const auto run = [&] {
    if (backward)
      s.ops.bias_relu_maxpool_backward(s.ctx, s.params, s.x, s.bias, s.y, s.dy, s.dx, s.dbias);
    else
      s.ops.bias_relu_maxpool_forward(s.ctx, s.params, s.x, s.bias, s.y);
  };
  run();  // warm
  for (auto _ : state) run();
  const int64_t bytes = backward ? 2 * (s.x.bytes() + s.y.bytes()) : s.x.bytes() + s.y.bytes();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes);
  unsetenv(cpu::kElementwiseIsaVariable);
}

void register_all() {
  // 3 x 64 MiB: memory; 3 x 4 MiB: a last-level cache of 16 MiB or more, where a step's
  // activation (8 MiB at batch 128) often still is when the next kernel reads it.
  benchmark::RegisterBenchmark("triad", triad)
      ->Arg(64)
      ->Arg(4)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  for (const KernelCase& k : kernel_cases())
    for (Layout layout : {Layout::NCHW, Layout::NHWC})
      for (cpu::CpuIsa isa : cpu::supported_cpu_isas())
        benchmark::RegisterBenchmark(
            (std::string(k.name) + "/" + to_string(layout) + "/" + cpu::to_string(isa)).c_str(),
            [&k, layout, isa](benchmark::State& state) { run_kernel(state, k, layout, isa); })
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
  const std::pair<const char*, Shape4> pools[] = {{"lenet.pool1", {256, 6, 28, 28}},
                                                  {"lenet.pool2", {256, 16, 10, 10}}};
  for (const auto& entry : pools)
    for (const bool backward : {false, true})
      for (Layout layout : {Layout::NCHW, Layout::NHWC})
        for (cpu::CpuIsa isa : cpu::supported_cpu_isas())
          benchmark::RegisterBenchmark(
              (std::string(backward ? "bias_relu_maxpool.bwd/" : "bias_relu_maxpool.fwd/") +
               entry.first + "/" + to_string(layout) + "/" + cpu::to_string(isa))
                  .c_str(),
              [in = entry.second, backward, layout, isa](benchmark::State& state) {
                run_pool(state, in, backward, layout, isa);
              })
              ->Unit(benchmark::kMicrosecond)
              ->UseRealTime();
}

}  // namespace
}  // namespace tunescope

int main(int argc, char** argv) {
  return tunescope::run_benchmark_program(argc, argv, tunescope::g_threads,
                                          tunescope::register_all);
}
