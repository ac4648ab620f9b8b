// The CUDA FFTs (docs/ARCHITECTURE.md problem 2 on the GPU), timed with CUDA events on one stream:
//  - transforms: our fft-own kernel vs cuFFT plan_many (cufftMakePlanMany64, planned
//    before timing), batched 2-D r2c and c2r of n x n planes, n = 8..128 (powers of two),
//    batch 256..16384, both in the frequency-major layout the convolutions use. Names
//    fft/<own|cufft>/<r2c|c2r>/<n>/<batch>; GFLOP/s counts 2.5 N log2 N per real
//    transform of N = n * n points, as bench_fft does for the CPU;
//  - convolutions: fft-own vs fft-cufft vs cudnn:fft on every LeNet-5 and resnet18-small
//    layer at batch 128, NCHW and NHWC, forward / backward data / backward filter. Names
//    <model>.<layer>/<layout>/<algorithm>/<pass>; an algorithm that cannot run a layer
//    (cudnn:fft: NCHW and stride 1 only) is skipped with its reason.
// Built only with the CUDA backend. Without a device it says why and exits with 0, so
// scripts can run it anywhere.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/ConvBenchLayers.h"
#include "core/base/AlignedBuffer.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/base/Tensor.h"
#include "core/base/ThreadPool.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaDevice.h"
#include "kernels/cuda/CudaMemory.h"
#include "kernels/cuda/CufftTransform.h"
#include "kernels/cuda/OwnFftCudaTransform.h"

namespace tunescope {
namespace {

using cuda::CudaFftTransformFactory;

// Skip batches whose planes and spectra exceed this (16384 planes of 128 x 128 need 2 GiB).
constexpr int64_t kMaxBytes = int64_t{4} << 30;

cudaStream_t bench_stream() {
  static cuda::LaneStreams streams(0);
  return streams.stream(0);
}

// The device time of what `enqueue` puts on the bench stream.
class EventTimer {
 public:
  EventTimer() {
    TS_CUDA_CHECK(cudaEventCreate(&start_));
    TS_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  template <typename Enqueue>
  double seconds(Enqueue enqueue) {
    TS_CUDA_CHECK(cudaEventRecord(start_, bench_stream()));
    enqueue();
    TS_CUDA_CHECK(cudaEventRecord(stop_, bench_stream()));
    TS_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    TS_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

std::vector<float> noise(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

std::unique_ptr<CudaFftTransformFactory> factory(const std::string& impl) {
  if (impl == "own") return std::make_unique<cuda::OwnFftCudaTransformFactory>();
  return std::make_unique<cuda::CufftTransformFactory>();
}

void run_transform(benchmark::State& state, const std::string& impl, bool inverse) {
  const int64_t n = state.range(0), count = state.range(1);
  const int64_t real_bytes = n * n * count * 4, spectrum_bytes = n * (n / 2 + 1) * count * 8;
  if (real_bytes + spectrum_bytes > kMaxBytes) {
    state.SkipWithError("batch too large for this benchmark");
    return;
  }
  MemorySpace& memory = cuda::CudaMemory::of_device(0);
  const auto transform = factory(impl)->make({n, n});
  AlignedBuffer real(static_cast<size_t>(real_bytes), memory),
      spectrum(static_cast<size_t>(spectrum_bytes), memory);
  AlignedBuffer work(std::max<size_t>(transform->work_bytes(count), 1), memory);
  const std::vector<float> host = noise(static_cast<size_t>(n * n * count), 42);
  memory.copy_from_host(real.data(), host.data(), real.bytes());
  auto* x = static_cast<float*>(real.data());
  auto* X = static_cast<float2*>(spectrum.data());
  transform->forward(x, X, count, work.data(), bench_stream());  // a valid spectrum for c2r
  EventTimer timer;
  for (auto _ : state) {
    state.SetIterationTime(timer.seconds([&] {
      if (inverse)
        transform->inverse(X, x, count, work.data(), bench_stream());
      else
        transform->forward(x, X, count, work.data(), bench_stream());
    }));
  }
  const double points = static_cast<double>(n * n);
  state.counters["FLOP/s"] =
      benchmark::Counter(2.5 * points * std::log2(points) * static_cast<double>(count),
                         benchmark::Counter::kIsIterationInvariantRate);
  state.counters["planes/s"] =
      benchmark::Counter(static_cast<double>(count), benchmark::Counter::kIsIterationInvariantRate);
}

enum class Pass { fwd, bwd_data, bwd_filter };

void run_conv(benchmark::State& state, const std::string& algorithm, ConvProblem p, Pass pass) {
  auto algo = Registry::instance().make_conv_algorithm("cuda", algorithm);
  if (const std::string reason = algo->unsupported_reason(p); !reason.empty()) {
    state.SkipWithError(reason.c_str());
    return;
  }
  MemorySpace& memory = cuda::CudaMemory::of_device(0);
  auto device_tensor = [&](Shape4 shape, uint32_t seed) {
    Tensor host(shape, p.layout);
    const std::vector<float> values = noise(static_cast<size_t>(host.size()), seed);
    std::copy(values.begin(), values.end(), host.data());
    return to_memory(host, memory);
  };
  const Tensor x = device_tensor(p.input, 1), w = device_tensor(p.filter(), 2),
               dy = device_tensor(p.output(), 3);
  Tensor y(p.output(), p.layout, memory), dx(p.input, p.layout, memory),
      dw(p.filter(), p.layout, memory);
  const size_t bytes = algo->workspace_bytes(p);
  AlignedBuffer workspace(bytes, memory);
  static ThreadPool pool(1);
  const ExecContext exec{pool, nullptr, 0, 0, NativeStream(bench_stream())};
  const ConvCall call{p, exec, bytes ? workspace.data() : nullptr, bytes};
  auto run = [&] {
    switch (pass) {
      case Pass::fwd: algo->forward(call, x, w, y); break;
      case Pass::bwd_data: algo->backward_data(call, dy, w, dx); break;
      case Pass::bwd_filter: algo->backward_filter(call, x, dy, dw); break;
    }
  };
  EventTimer timer;
  timer.seconds(run);  // warm-up: plans, cuBLAS and cuDNN initialisation
  for (auto _ : state) state.SetIterationTime(timer.seconds(run));
  state.counters["FLOPS"] = benchmark::Counter(
      p.flops(), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::OneK::kIs1000);
  state.counters["workspace_MiB"] = static_cast<double>(bytes) / (1 << 20);
}

// A failed candidate is recorded and the sweep goes on (STYLE.md, cutlass).
template <typename... Args>
void guarded(benchmark::State& state, void (*body)(benchmark::State&, Args...), Args... args) {
  try {
    body(state, args...);
  } catch (const Error& e) {
    state.SkipWithError(e.what());
  }
}

void bm_transform(benchmark::State& state, std::string impl, bool inverse) {
  guarded<const std::string&, bool>(state, run_transform, impl, inverse);
}

void bm_conv(benchmark::State& state, std::string algorithm, ConvProblem p, Pass pass) {
  guarded<const std::string&, ConvProblem, Pass>(state, run_conv, algorithm, p, pass);
}

void register_all() {
  for (const char* impl : {"own", "cufft"})
    for (const auto& [inverse, tag] : {std::pair{false, "r2c"}, std::pair{true, "c2r"}})
      for (int64_t n : {8, 16, 32, 64, 128})
        for (int64_t batch : {256, 1024, 4096, 16384})
          benchmark::RegisterBenchmark(("fft/" + std::string(impl) + "/" + tag).c_str(),
                                       bm_transform, std::string(impl), inverse)
              ->Args({n, batch})
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond);
  const std::pair<Pass, const char*> passes[] = {
      {Pass::fwd, "fwd"}, {Pass::bwd_data, "bwd_data"}, {Pass::bwd_filter, "bwd_filter"}};
  for (const bench::ConvLayer& layer : bench::model_conv_layers())
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      ConvProblem p = layer.problem;
      p.layout = layout;
      for (const char* algorithm : {"fft-own", "fft-cufft", "cudnn:fft"})
        for (const auto& [pass, tag] : passes)
          benchmark::RegisterBenchmark(
              (layer.name + "/" + to_string(layout) + "/" + algorithm + "/" + tag).c_str(), bm_conv,
              std::string(algorithm), p, pass)
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond);
    }
}

}  // namespace
}  // namespace tunescope

int main(int argc, char** argv) {
  if (const std::string reason = tunescope::cuda::cuda_unavailable_reason(); !reason.empty()) {
    std::printf("bench_fft_cuda: nothing to measure: %s\n", reason.c_str());
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext(
      "device", tunescope::cuda::describe_cuda_device(tunescope::cuda::query_cuda_device(0),
                                                      tunescope::cuda::query_library_versions()));
  tunescope::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
