// Ranks as threads of one process, for tests of the rank code without MPI: each thread
// holds the Communicator of its rank; collectives meet in a shared hub.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "core/base/Ranks.h"

namespace tunescope::test_support {

class LoopbackHub {
 public:
  explicit LoopbackHub(int size) : size_(size), slots_(static_cast<size_t>(size)) {}
  int size() const { return size_; }

  // Every rank's bytes, once all ranks have given theirs.
  std::vector<std::vector<std::byte>> exchange(int rank, std::span<const std::byte> bytes) {
    std::unique_lock lock(mutex_);
    const uint64_t generation = generation_;
    slots_[static_cast<size_t>(rank)].assign(bytes.begin(), bytes.end());
    if (++arrived_ == size_) {
      result_ = slots_;
      arrived_ = 0;
      ++generation_;
      changed_.notify_all();
    } else {
      changed_.wait(lock, [&] { return generation_ != generation; });
    }
    return result_;
  }
  void send(int from, int to, std::span<const std::byte> bytes) {
    std::lock_guard lock(mutex_);
    mail_[{from, to}].emplace_back(bytes.begin(), bytes.end());
    changed_.notify_all();
  }
  std::vector<std::byte> receive(int from, int to) {
    std::unique_lock lock(mutex_);
    auto& box = mail_[{from, to}];
    changed_.wait(lock, [&] { return !box.empty(); });
    std::vector<std::byte> message = std::move(box.front());
    box.pop_front();
    return message;
  }
  bool has_message(int from, int to) {
    std::lock_guard lock(mutex_);
    return !mail_[{from, to}].empty();
  }
  // The `index`-th duplicate's hub (ranks duplicate in the same order).
  std::shared_ptr<LoopbackHub> child(int index) {
    std::lock_guard lock(mutex_);
    auto& hub = children_[index];
    if (!hub) hub = std::make_shared<LoopbackHub>(size_);
    return hub;
  }

 private:
  int size_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::vector<std::byte>> slots_, result_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  std::map<std::pair<int, int>, std::deque<std::vector<std::byte>>> mail_;
  std::map<int, std::shared_ptr<LoopbackHub>> children_;
};

class LoopbackCommunicator final : public Communicator {
 public:
  LoopbackCommunicator(std::shared_ptr<LoopbackHub> hub, int rank)
      : hub_(std::move(hub)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return hub_->size(); }
  int local_size() const override { return hub_->size(); }
  int local_rank() const override { return rank_; }
  void allreduce_sum(std::span<float> values) override { sum(values); }
  void allreduce_sum(std::span<double> values) override { sum(values); }
  void broadcast(std::span<std::byte> bytes, int root) override {
    const auto all = hub_->exchange(rank_, bytes);
    std::memcpy(bytes.data(), all[static_cast<size_t>(root)].data(), bytes.size());
  }
  void send(std::span<const std::byte> bytes, int to) override { hub_->send(rank_, to, bytes); }
  void receive(std::span<std::byte> bytes, int from) override {
    const auto message = hub_->receive(from, rank_);
    std::memcpy(bytes.data(), message.data(), std::min(bytes.size(), message.size()));
  }
  bool has_message(int from) override { return hub_->has_message(from, rank_); }
  std::unique_ptr<Communicator> duplicate() override {
    return std::make_unique<LoopbackCommunicator>(hub_->child(duplicates_++), rank_);
  }
  [[noreturn]] void abort(int) override { std::abort(); }

 private:
  template <class T>
  void sum(std::span<T> values) {
    const auto all = hub_->exchange(rank_, std::as_bytes(values));
    // In rank order on every rank, so every rank gets the same rounding.
    for (size_t i = 0; i < values.size(); ++i) {
      T total = 0;
      for (const auto& bytes : all) total += reinterpret_cast<const T*>(bytes.data())[i];
      values[i] = total;
    }
  }

  std::shared_ptr<LoopbackHub> hub_;
  int rank_;
  int duplicates_ = 0;
};

// Runs body(communicator) on `size` threads, one per rank; rethrows the first failure.
inline void run_ranks(int size, const std::function<void(Communicator&)>& body) {
  auto hub = std::make_shared<LoopbackHub>(size);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      LoopbackCommunicator communicator(hub, r);
      try {
        body(communicator);
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
      }
    });
  for (auto& thread : threads) thread.join();
  for (auto& error : errors)
    if (error) std::rethrow_exception(error);
}

}  // namespace tunescope::test_support
