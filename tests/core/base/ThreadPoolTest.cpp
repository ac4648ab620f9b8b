#include "core/base/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
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
