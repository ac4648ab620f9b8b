// Which ConvCall::saved buffer an algorithm's last forward pass filled, and from which x
// and w: a backward pass reuses what forward kept there only when it is handed the same
// buffer and the same tensors. The backward passes may run on another lane than forward
// did, hence the lock.
#pragma once

#include <mutex>

namespace tunescope {

class SavedByForward {
 public:
  // Until the forward pass now running has filled the buffer.
  void forget() {
    std::lock_guard lock(mutex_);
    buffer_ = nullptr;
  }
  void remember(const void* buffer, const float* x, const float* w) {
    std::lock_guard lock(mutex_);
    buffer_ = buffer, x_ = x, w_ = w;
  }
  // Whether `buffer` holds what the last forward kept from x and w (null x or w: any).
  bool holds(const void* buffer, const float* x, const float* w) const {
    std::lock_guard lock(mutex_);
    return buffer && buffer_ == buffer && (!x || x_ == x) && (!w || w_ == w);
  }

 private:
  mutable std::mutex mutex_;
  const void* buffer_ = nullptr;
  const float* x_ = nullptr;
  const float* w_ = nullptr;
};

}  // namespace tunescope
