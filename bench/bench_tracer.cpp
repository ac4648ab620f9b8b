// What tracing costs a kernel: ns per KernelScope when recording (1 and 2 threads),
// against a null tracer, a stopped tracer and the two clock reads every scope needs;
// and a RangeScope (layer/phase), which also takes a range id from a counter shared by
// the threads and pushes an NVTX range (no tool attached: a null check).
// The Time column is ns per record per thread.
#include <benchmark/benchmark.h>

#include <memory>

#include "profiler/Tracer.h"

namespace {

using tunescope::profiler::ActivityKind;
using tunescope::profiler::KernelScope;
using tunescope::profiler::RangeCategory;
using tunescope::profiler::RangeScope;
using tunescope::profiler::Tracer;

// Fixed so that a run's records (~56 bytes each) stay near 60 MB per thread.
constexpr int64_t kRecordsPerRun = 1 << 20;

std::unique_ptr<Tracer> g_tracer;

// Fresh: a new tracer per run, so every chunk is new memory and its first touch
// (page faults) is paid while recording. Warm: one tracer for the whole program,
// cleared by collect() after each run, as a tuner reusing its tracer across
// candidates sees it from the second candidate on.
enum class Buffers { fresh, warm };

void begin_run(benchmark::State& state, bool recording, Buffers buffers) {
  if (state.thread_index() != 0) return;
  if (buffers == Buffers::fresh || !g_tracer) g_tracer = std::make_unique<Tracer>();
  if (recording) g_tracer->start();
}

void end_run(benchmark::State& state, Buffers buffers) {
  if (state.thread_index() != 0) return;
  // Every record must have arrived, or the benchmark measured something else.
  const bool recording = g_tracer->recording();
  g_tracer->stop();
  const size_t expected =
      recording ? static_cast<size_t>(state.iterations()) * static_cast<size_t>(state.threads())
                : 0;
  if (g_tracer->record_count() != expected) state.SkipWithError("records were lost");
  if (buffers == Buffers::fresh)
    g_tracer.reset();
  else
    g_tracer->collect({});
}

void scopes(benchmark::State& state, Tracer* tracer) {
  const char* name = "conv2d_forward";
  const int lane = state.thread_index();
  for (auto _ : state) {
    KernelScope scope(tracer, name, 0, lane, 1e6, 4096);
    benchmark::ClobberMemory();
  }
}

void BM_ClockPair(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(tunescope::profiler::now_ns());
    benchmark::DoNotOptimize(tunescope::profiler::now_ns());
  }
}

void BM_KernelScopeNullTracer(benchmark::State& state) { scopes(state, nullptr); }

void BM_KernelScopeStopped(benchmark::State& state) {
  begin_run(state, false, Buffers::warm);
  scopes(state, g_tracer.get());
  end_run(state, Buffers::warm);
}

void BM_KernelScopeRecording(benchmark::State& state, Buffers buffers) {
  begin_run(state, true, buffers);
  scopes(state, g_tracer.get());
  end_run(state, buffers);
}

// The append alone, without the clock: the tracer's own share of a record.
void BM_RecordActivity(benchmark::State& state, Buffers buffers) {
  begin_run(state, true, buffers);
  Tracer* tracer = g_tracer.get();
  const int lane = state.thread_index();
  int64_t t = 0;
  for (auto _ : state) {
    tracer->record_activity(ActivityKind::kernel, "conv2d_forward", 0, lane, t, t + 1, 1e6, 4096);
    ++t;
  }
  end_run(state, buffers);
}

void BM_RangeScopeRecording(benchmark::State& state) {
  begin_run(state, true, Buffers::warm);
  Tracer* tracer = g_tracer.get();
  const int lane = state.thread_index();
  for (auto _ : state) {
    RangeScope scope(tracer, "conv1", RangeCategory::layer, 0, lane);
    benchmark::ClobberMemory();
  }
  end_run(state, Buffers::warm);
}

BENCHMARK(BM_ClockPair);
BENCHMARK(BM_KernelScopeNullTracer);
BENCHMARK(BM_KernelScopeStopped)->Iterations(kRecordsPerRun);
BENCHMARK_CAPTURE(BM_KernelScopeRecording, warm, Buffers::warm)
    ->Iterations(kRecordsPerRun)
    ->Repetitions(5)
    ->ReportAggregatesOnly()
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_KernelScopeRecording, fresh, Buffers::fresh)
    ->Iterations(kRecordsPerRun)
    ->Repetitions(5)
    ->ReportAggregatesOnly()
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();
BENCHMARK(BM_RangeScopeRecording)
    ->Iterations(kRecordsPerRun)
    ->Repetitions(5)
    ->ReportAggregatesOnly()
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_RecordActivity, warm, Buffers::warm)
    ->Iterations(kRecordsPerRun)
    ->Repetitions(5)
    ->ReportAggregatesOnly()
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_RecordActivity, fresh, Buffers::fresh)
    ->Iterations(kRecordsPerRun)
    ->Repetitions(5)
    ->ReportAggregatesOnly()
    ->Threads(1)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
