// The main() of a benchmark program whose benchmarks depend on the thread count: takes
// --threads=N (bench/BenchThreads.h), records it in the report's context, registers the
// program's benchmarks (they read the count) and runs them.
#pragma once

#include <benchmark/benchmark.h>

#include <string>

#include "bench/BenchThreads.h"

namespace tunescope {

inline int run_benchmark_program(int argc, char** argv, int& threads, void (*register_all)()) {
  threads = bench_threads_from(argc, argv);
  benchmark::AddCustomContext("threads", std::to_string(threads));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace tunescope
