#include "core/base/CoreDistance.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <thread>
#include <vector>

#include "core/base/CpuAffinity.h"
#include "core/base/Error.h"

namespace tunescope {

namespace {
// The ball's values besides the rallies' (odd: A served round i, even: B returned it).
constexpr int64_t kNotReady = -1;   // B is not bound yet
constexpr int64_t kAbandoned = -2;  // a side could not be bound: the other stops
}  // namespace

double cache_line_round_trip_ns(int cpu_a, int cpu_b, int round_trips) {
  if (round_trips < 1 || round_trips > 10'000'000)
    fail(ErrorKind::usage, "cache-line round trips must be 1..10000000, got ", round_trips);
  alignas(64) std::atomic<int64_t> ball{kNotReady};
  double seconds = 0;
  std::exception_ptr error_a, error_b;
  // Binds the calling thread to `cpu`; on a refusal keeps the error and abandons the rally.
  const auto bound_to = [&](int cpu, std::exception_ptr& error) {
    try {
      bind_thread_to_cpu(pthread_self(), cpu, "the core-distance probe");
      return true;
    } catch (...) {
      error = std::current_exception();
      ball.store(kAbandoned, std::memory_order_release);
      return false;
    }
  };
  std::thread b([&] {
    if (!bound_to(cpu_b, error_b)) return;
    int64_t expected = kNotReady;
    if (!ball.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) return;
    for (int64_t i = 0; i < round_trips; ++i) {
      int64_t seen = ball.load(std::memory_order_acquire);
      for (; seen != 2 * i + 1; seen = ball.load(std::memory_order_acquire))
        if (seen == kAbandoned) return;
      ball.store(2 * i + 2, std::memory_order_release);
    }
  });
  std::thread a([&] {
    if (!bound_to(cpu_a, error_a)) return;
    for (int64_t seen = ball.load(std::memory_order_acquire); seen != 0;
         seen = ball.load(std::memory_order_acquire))
      if (seen == kAbandoned) return;
    const auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < round_trips; ++i) {
      ball.store(2 * i + 1, std::memory_order_release);
      while (ball.load(std::memory_order_acquire) != 2 * i + 2) {
      }
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  a.join();
  b.join();
  if (error_a) std::rethrow_exception(error_a);
  if (error_b) std::rethrow_exception(error_b);
  return seconds * 1e9 / round_trips;
}

std::optional<profiler::CoreDistanceWatch> start_core_distance_watch(int threads) {
  if (threads < 2) return std::nullopt;
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) return std::nullopt;
  profiler::CoreDistanceWatch watch;
  watch.cpu_a = cpus[0];
  watch.cpu_b = cpus[1];
  watch.start_ns = cache_line_round_trip_ns(cpus[0], cpus[1], kCoreDistanceRoundTrips);
  return watch;
}

void end_core_distance_watch(std::optional<profiler::CoreDistanceWatch>& watch) {
  if (watch)
    watch->end_ns = cache_line_round_trip_ns(watch->cpu_a, watch->cpu_b, kCoreDistanceRoundTrips);
}

}  // namespace tunescope
