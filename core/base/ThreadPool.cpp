#include "core/base/ThreadPool.h"

#include <algorithm>

#include "core/base/Error.h"
#include "core/base/SpinBudget.h"

namespace tunescope {

namespace {
// True on a thread currently executing a chunk of some pool: nested regions run inline.
thread_local bool in_parallel_region = false;

// A step's parallel regions come back to back (LeNet-5's runs a dozen, microseconds apart),
// and a thread asleep on a condition variable wakes through a futex and, on a VM, an
// interrupt to a halted vCPU. So a worker spins some pause instructions for the next region
// before it sleeps, and a caller as long for its workers' last chunks: how many is
// SpinBudget's call (512 pauses took 23 us on the Zen 4 VMs). Bounded, so an idle pool
// still sleeps.

inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins until done() or SpinBudget's pauses; true when done() held.
template <class Done>
bool spin_until(const Done& done) {
  const int pauses = spin_pauses_now();
  for (int i = 0; i < pauses; ++i) {
    if (done()) return true;
    cpu_pause();
  }
  return done();
}
}  // namespace

ThreadPool::ThreadPool(int threads) : cursors_(threads < 1 ? 0 : threads) {
  if (threads < 1) fail(ErrorKind::usage, "thread count must be >= 1, got ", threads);
  workers_.reserve(threads - 1);
  for (int slot = 1; slot < threads; ++slot)
    workers_.emplace_back([this, slot] { worker_loop(slot); });
}

std::vector<std::thread::native_handle_type> ThreadPool::worker_handles() {
  std::vector<std::thread::native_handle_type> handles;
  handles.reserve(workers_.size());
  for (std::thread& worker : workers_) handles.push_back(worker.native_handle());
  return handles;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunks(int slot) {
  const bool was_nested = in_parallel_region;
  in_parallel_region = true;
  const int blocks = size();
  for (int k = 0; k < blocks; ++k) {
    BlockCursor& cursor = cursors_[static_cast<size_t>((slot + k) % blocks)];
    for (int64_t chunk = cursor.next.fetch_add(1, std::memory_order_relaxed); chunk < cursor.end;
         chunk = cursor.next.fetch_add(1, std::memory_order_relaxed)) {
      const int64_t begin = chunk * chunk_;
      const int64_t end = std::min(count_, begin + chunk_);
      try {
        (*body_)(begin, end);
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
    }
  }
  in_parallel_region = was_nested;
}

void ThreadPool::worker_loop(int slot) {
  uint64_t seen = 0;
  for (;;) {
    spin_until([&] {
      return stopping_.load(std::memory_order_acquire) ||
             generation_.load(std::memory_order_acquire) != seen;
    });
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      ++workers_busy_;
    }
    run_chunks(slot);
    {
      std::lock_guard lock(mutex_);
      --workers_busy_;
    }
    done_.notify_all();
  }
}

void ThreadPool::parallel_for(int64_t count, const std::function<void(int64_t, int64_t)>& body,
                              int64_t grain) {
  if (count <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  if (workers_.empty() || in_parallel_region || count <= grain) {
    body(0, count);
    return;
  }
  std::lock_guard region(region_mutex_);
  // About four chunks per thread balances uneven chunks without much locking.
  const int64_t target_chunks = static_cast<int64_t>(size()) * 4;
  const int64_t chunk = std::max(grain, (count + target_chunks - 1) / target_chunks);
  {
    std::unique_lock lock(mutex_);
    // A worker that woke after the last region ended may still be walking its cursors.
    done_.wait(lock, [&] { return workers_busy_ == 0; });
    body_ = &body;
    count_ = count;
    chunk_ = chunk;
    const int64_t chunks = (count + chunk - 1) / chunk;
    const auto blocks = static_cast<int64_t>(cursors_.size());
    for (int64_t s = 0; s < blocks; ++s) {
      cursors_[static_cast<size_t>(s)].next.store(chunks * s / blocks, std::memory_order_relaxed);
      cursors_[static_cast<size_t>(s)].end = chunks * (s + 1) / blocks;
    }
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  run_chunks(0);
  // Every chunk is claimed once run_chunks returns; what is left is the workers' last ones.
  spin_until([&] { return workers_busy_.load(std::memory_order_acquire) == 0; });
  std::exception_ptr error;
  {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return workers_busy_ == 0; });
    body_ = nullptr;
    error = error_;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace tunescope
