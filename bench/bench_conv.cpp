// GFLOP/s of every CPU convolution algorithm (forward, backward data, backward filter)
// on every conv layer of LeNet-5 and resnet18-small at batch 128, NCHW and NHWC, each
// layer beside a pool-parallel cblas_sgemm of its equivalent GEMM (M = N*P*Q, N = K,
// K = C*R*S) as the roofline reference.
//
// On the crossover and tiling layers fft-fftw and fft-own also run with their tiling forced
// (fft_tile, FftTiling.h): <algorithm>@off (untiled), @16 and @32 (tiles of 16x16 / 32x32
// transforms); the plain names use the automatic rule.
//
// On resnet18-small's 3x3 stride-1 layers at batch 32 and 128 ("wino.b<batch>.<layer>")
// only direct, gemm, fft-own and winograd with each tile forced (winograd@f2, @f4) run.
//
// Threads: --threads=N or TUNESCOPE_BENCH_THREADS=N (default: hardware concurrency).
// Names are <model>.<layer>/<layout>/<algorithm>/<pass>; filter with --benchmark_filter.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/BenchMain.h"
#include "bench/ConvBenchLayers.h"
#include "core/base/AlignedBuffer.h"
#include "core/base/ConvProblem.h"
#include "core/base/Registry.h"
#include "core/base/Tensor.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/ConvWinograd.h"
#include "kernels/cpu/FftTileChoice.h"

namespace tunescope {
namespace {

using bench::ConvLayer;

const std::vector<ConvLayer>& layers() {
  static const std::vector<ConvLayer> all = [] {
    std::vector<ConvLayer> out = bench::model_conv_layers();
    for (const ConvLayer& layer : bench::crossover_layers()) out.push_back(layer);
    for (const ConvLayer& layer : bench::tiling_layers()) out.push_back(layer);
    for (const ConvLayer& layer : bench::winograd_layers()) out.push_back(layer);
    return out;
  }();
  return all;
}

int g_threads = 1;

ThreadPool& pool() {
  static ThreadPool shared(g_threads);
  return shared;
}

void fill(Tensor& t, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = dist(rng);
}

void set_rate(benchmark::State& state, const ConvProblem& p) {
  state.counters["FLOPS"] = benchmark::Counter(
      p.flops(), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::OneK::kIs1000);
}

enum class Pass { fwd, bwd_data, bwd_filter };

// A registered algorithm, or "<fft algorithm>@<tiling>" for it with that fft_tile (as a
// config's fft_tile would set it).
std::unique_ptr<ConvAlgorithm> make_algorithm(const std::string& name) {
  const size_t at = name.find('@');
  if (at == std::string::npos) return Registry::instance().make_conv_algorithm("cpu", name);
  // "<algorithm>@<value>": the algorithm made with the value of the knob it declares.
  const std::string algorithm = name.substr(0, at), value = name.substr(at + 1);
  KnobValues knobs;
  if (algorithm == "winograd")
    cpu::winograd_tile_knob.set(knobs, *cpu::parse_winograd_tile(value));
  else
    fft_tile_knob.set(knobs, *parse_fft_tile_choice(value));
  return Registry::instance().make_conv_algorithm("cpu", algorithm, knobs);
}

void run_conv(benchmark::State& state, const std::string& algorithm, ConvProblem p, Pass pass) {
  auto algo = make_algorithm(algorithm);
  if (!algo->supports(p)) {
    state.SkipWithError(algo->unsupported_reason(p).c_str());
    return;
  }
  Tensor x(p.input, p.layout), w(p.filter(), p.layout), y(p.output(), p.layout);
  Tensor dx(p.input, p.layout), dw(p.filter(), p.layout);
  fill(x, 1);
  fill(w, 2);
  fill(y, 3);  // doubles as dy
  const size_t bytes = algo->workspace_bytes(p);
  AlignedBuffer workspace(bytes);
  const ExecContext exec{pool()};
  const ConvCall call{p, exec, workspace.data(), bytes};
  for (auto _ : state) {
    switch (pass) {
      case Pass::fwd: algo->forward(call, x, w, y); break;
      case Pass::bwd_data: algo->backward_data(call, y, w, dx); break;
      case Pass::bwd_filter: algo->backward_filter(call, x, y, dw); break;
    }
    benchmark::ClobberMemory();
  }
  set_rate(state, p);
  state.counters["workspace_MiB"] = static_cast<double>(bytes) / (1 << 20);
}

// The layer's GEMM (M = N*P*Q, N = K, K = C*R*S) with M split across the pool, as a
// single-threaded OpenBLAS is used by the algorithms: what im2col-free GEMM would reach.
void run_sgemm(benchmark::State& state, ConvProblem p) {
  const Shape4 out = p.output();
  const int64_t M = out.n * out.h * out.w, N = p.out_channels,
                K = p.input.c * p.kernel_h * p.kernel_w;
  std::vector<float> a(static_cast<size_t>(M * K), 0.5f), b(static_cast<size_t>(K * N), 0.25f),
      c(static_cast<size_t>(M * N));
  for (auto _ : state) {
    pool().parallel_for(
        M,
        [&](int64_t begin, int64_t end) {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(end - begin),
                      static_cast<int>(N), static_cast<int>(K), 1.0f, a.data() + begin * K,
                      static_cast<int>(K), b.data(), static_cast<int>(N), 0.0f,
                      c.data() + begin * N, static_cast<int>(N));
        },
        256);
    benchmark::ClobberMemory();
  }
  set_rate(state, p);
}

void register_all() {
  const std::vector<std::string> registered = Registry::instance().conv_algorithms("cpu");
  const std::pair<Pass, const char*> passes[] = {
      {Pass::fwd, "fwd"}, {Pass::bwd_data, "bwd_data"}, {Pass::bwd_filter, "bwd_filter"}};
  for (const ConvLayer& layer : layers())
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      std::vector<std::string> algorithms = registered;
      if (layer.name.rfind("wino.", 0) == 0)
        algorithms = {"direct", "gemm", "fft-own", "winograd@f2", "winograd@f4"};
      if (layer.name.rfind("xover.", 0) == 0 || layer.name.rfind("tiling.", 0) == 0)
        for (const char* fft : {"fft-fftw", "fft-own"})
          for (const char* tiling : {"off", "16", "32"})
            algorithms.push_back(std::string(fft) + "@" + tiling);
      ConvProblem p = layer.problem;
      p.layout = layout;
      const std::string prefix = std::string(layer.name) + "/" + to_string(layout) + "/";
      benchmark::RegisterBenchmark((prefix + "sgemm-roofline").c_str(), run_sgemm, p)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
      for (const std::string& algorithm : algorithms)
        for (const auto& [pass, tag] : passes)
          benchmark::RegisterBenchmark((prefix + algorithm + "/" + tag).c_str(), run_conv,
                                       algorithm, p, pass)
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime();
    }
}

}  // namespace
}  // namespace tunescope

int main(int argc, char** argv) {
  return tunescope::run_benchmark_program(argc, argv, tunescope::g_threads,
                                          tunescope::register_all);
}
