#include "core/base/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

namespace tunescope {
namespace {

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (int64_t count : {1, 7, 1000, 4097}) {
      std::vector<std::atomic<int>> hits(count);
      pool.parallel_for(
          count,
          [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) hits[i]++;
          },
          3);
      for (int64_t i = 0; i < count; ++i)
        ASSERT_EQ(hits[i].load(), 1) << "threads " << threads << " i " << i;
    }
  }
}

TEST(ThreadPool, CoversEveryIndexOnceWhileThreadsTakeEachOthersChunks) {
  // Chunks of random cost, region after region: threads finish their own blocks at
  // different times and take from the others', and a worker may wake after its region.
  ThreadPool pool(3);
  std::mt19937 random(7);
  for (int region = 0; region < 200; ++region) {
    const int64_t count = std::uniform_int_distribution<int64_t>(1, 300)(random);
    std::vector<std::atomic<int>> hits(count);
    pool.parallel_for(count, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if (i % 17 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
        hits[i]++;
      }
    });
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(hits[i].load(), 1) << "region " << region << " count " << count << " i " << i;
  }
}

TEST(ThreadPool, AThreadDoneWithItsBlockTakesTheChunksOfASlowOne) {
  // Two threads, eight chunks: the caller's block is chunks 0-3, the worker's 4-7. The
  // caller's chunks are slow, so the worker, done with its own, takes most of the caller's.
  ThreadPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex mutex;
  std::vector<int64_t> by_caller, by_worker;
  pool.parallel_for(8, [&](int64_t b, int64_t e) {
    const bool on_caller = std::this_thread::get_id() == caller;
    if (on_caller) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::lock_guard lock(mutex);
    for (int64_t i = b; i < e; ++i) (on_caller ? by_caller : by_worker).push_back(i);
  });
  EXPECT_EQ(by_caller.size() + by_worker.size(), 8U);
  EXPECT_LE(by_caller.size(), 2U) << "the worker did not take the slow caller's chunks";
  // The worker starts with its own block.
  ASSERT_FALSE(by_worker.empty());
  EXPECT_GE(by_worker.front(), 4);
}

TEST(ThreadPool, NestedRegionRunsInline) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  pool.parallel_for(8, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      pool.parallel_for(10, [&](int64_t b2, int64_t e2) { total += e2 - b2; });
  });
  EXPECT_EQ(total.load(), 80);
}

TEST(ThreadPool, RethrowsChunkException) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.parallel_for(100,
                                 [](int64_t b, int64_t) {
                                   if (b == 0) throw std::runtime_error("boom");
                                 }),
               std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int> n{0};
  pool.parallel_for(10, [&](int64_t b, int64_t e) { n += static_cast<int>(e - b); });
  EXPECT_EQ(n.load(), 10);
}

TEST(ThreadPool, RejectsZeroThreads) { EXPECT_ANY_THROW(ThreadPool(0)); }

}  // namespace
}  // namespace tunescope
