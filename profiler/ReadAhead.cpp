#include "profiler/ReadAhead.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace tunescope::profiler {

ReadAhead::ReadAhead(std::function<bool(Chunk&)> fill, size_t chunk_bytes, size_t depth)
    : fill_(std::move(fill)),
      chunk_bytes_(std::max<size_t>(chunk_bytes, 1)),
      depth_(std::max<size_t>(depth, 1)),
      thread_([this] { run(); }) {}

ReadAhead::~ReadAhead() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void ReadAhead::run() {
  for (;;) {
    Chunk chunk;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || ready_.size() < depth_; });
      if (stop_) return;
    }
    chunk.bytes.resize(chunk_bytes_);
    bool more = false;
    std::exception_ptr failure;
    try {
      more = fill_(chunk);
    } catch (...) {
      failure = std::current_exception();
    }
    {
      const std::lock_guard lock(mutex_);
      if (!failure && !chunk.bytes.empty()) ready_.push_back(std::move(chunk));
      if (failure || !more) {
        failure_ = failure;
        ended_ = true;
      }
    }
    changed_.notify_all();
    if (failure || !more) return;
  }
}

size_t ReadAhead::read(char* out, size_t capacity) {
  while (consumed_ == current_.bytes.size()) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !ready_.empty() || ended_; });
    if (ready_.empty()) {
      if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
      return 0;
    }
    current_ = std::move(ready_.front());
    ready_.pop_front();
    consumed_ = 0;
    position_ = current_.position;
    lock.unlock();
    changed_.notify_all();
  }
  const size_t n = std::min(capacity, current_.bytes.size() - consumed_);
  std::memcpy(out, current_.bytes.data() + consumed_, n);
  consumed_ += n;
  return n;
}

}  // namespace tunescope::profiler
