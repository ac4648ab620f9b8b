// The thread count of a benchmark program: --threads=N or TUNESCOPE_BENCH_THREADS=N
// (default: hardware concurrency). Shared by the bench programs so they read it alike.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace tunescope {

// Takes --threads=N out of argv (Google Benchmark rejects unknown flags).
inline int bench_threads_from(int& argc, char** argv) {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (const char* env = std::getenv("TUNESCOPE_BENCH_THREADS"))
    threads = std::max(1, std::atoi(env));
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0)
      threads = std::max(1, std::atoi(argv[i] + 10));
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  return threads;
}

}  // namespace tunescope
