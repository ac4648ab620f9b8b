// An explicit pool of worker threads for data-parallel loops inside one kernel.
// The calling thread takes part, so a pool of size 1 runs everything inline.
// One parallel region runs at a time per pool; a parallel_for called from inside
// a running region (nested) runs serially in the caller, so kernels may call
// helpers that are themselves parallel without deadlock.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tunescope {

class ThreadPool {
 public:
  // threads >= 1: total threads including the caller; threads - 1 workers are started.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // The OS handles of the size() - 1 workers, for their owner to bind them to CPUs.
  std::vector<std::thread::native_handle_type> worker_handles();

  // Calls body(begin, end) on disjoint chunks covering [0, count), each chunk at
  // least `grain` long (but the last). Blocks until all chunks ran. The first
  // exception thrown by a chunk is rethrown in the caller after the others finish.
  void parallel_for(int64_t count, const std::function<void(int64_t begin, int64_t end)>& body,
                    int64_t grain = 1);

 private:
  void worker_loop(int slot);
  void run_chunks(int slot);

  // The chunks of a region are dealt out in size() contiguous blocks, block s first to
  // thread s (the caller is 0, worker i is i + 1), so that a thread takes the same part of
  // the same loop region after region and finds that part's data in its own caches; a
  // thread whose block is done takes chunks from the others' blocks. Each cursor on a
  // cache line of its own, so that claiming a chunk does not move another thread's line.
  struct alignas(64) BlockCursor {
    std::atomic<int64_t> next = 0;
    int64_t end = 0;
  };

  std::vector<std::thread> workers_;
  std::mutex region_mutex_;  // one parallel region at a time
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int64_t, int64_t)>* body_ = nullptr;
  int64_t count_ = 0;
  int64_t chunk_ = 1;
  // Reset under mutex_ only while no worker is in a region (workers_busy_ == 0).
  std::vector<BlockCursor> cursors_;
  // Written under mutex_; atomic so that a worker between regions and a caller waiting
  // for its workers can spin on them briefly before they sleep on the condition variables.
  std::atomic<int> workers_busy_ = 0;
  std::atomic<uint64_t> generation_ = 0;
  std::atomic<bool> stopping_ = false;
  std::exception_ptr error_;
};

}  // namespace tunescope
