// The lane threads: one mutex and one condition variable for queues, events and
// failure. Tasks are coarse (a layer's kernel), so the shared lock is never contended
// for long, and waiting for an event needs no extra thread or callback machinery.
#include "core/engine/Executor.h"

#include <algorithm>

#include "core/base/Error.h"

namespace tunescope {

Executor::Executor(int lanes, int threads_per_lane, profiler::Tracer* tracer, Backend* backend,
                   std::vector<int> lane_devices, int host_lanes)
    : tracer_(tracer), backend_(backend), threads_per_lane_(threads_per_lane), lanes_(static_cast<size_t>(lanes)) {
  if (lanes < 1) fail(ErrorKind::usage, "an executor needs >= 1 lane, got ", lanes);
  if (threads_per_lane < 1) fail(ErrorKind::usage, "threads per lane must be >= 1, got ", threads_per_lane);
  if (!lane_devices.empty() && lane_devices.size() != lanes_.size())
    fail(ErrorKind::runtime, "executor: devices for ", lane_devices.size(), " lanes, but ", lanes, " lanes");
  if (host_lanes < 0 || host_lanes > lanes)
    fail(ErrorKind::runtime, "executor: ", host_lanes, " host lanes of ", lanes, " lanes");
  for (size_t i = 0; i < lanes_.size(); ++i) {
    lanes_[i].pool = std::make_unique<ThreadPool>(threads_per_lane);
    if (!lane_devices.empty()) lanes_[i].device = lane_devices[i];
    lanes_[i].host = static_cast<int>(i) >= lanes - host_lanes;
  }
  for (int i = 0; i < lanes; ++i) lanes_[static_cast<size_t>(i)].thread = std::thread([this, i] { lane_loop(i); });
}

Executor::~Executor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (Lane& lane : lanes_) lane.thread.join();
}

void Executor::submit(int lane, Task task) {
  {
    std::lock_guard lock(mutex_);
    lanes_.at(static_cast<size_t>(lane)).queue.push_back(Item{Item::Kind::run, std::move(task)});
  }
  changed_.notify_all();
}

void Executor::submit_finally(int lane, Task task) {
  {
    std::lock_guard lock(mutex_);
    lanes_.at(static_cast<size_t>(lane)).queue.push_back(Item{Item::Kind::run, std::move(task), nullptr, 0, true});
  }
  changed_.notify_all();
}

void Executor::record(int lane, Event& event) {
  {
    std::lock_guard lock(mutex_);
    lanes_.at(static_cast<size_t>(lane)).queue.push_back(Item{Item::Kind::record, {}, &event, ++event.recorded_});
  }
  changed_.notify_all();
}

void Executor::wait(int lane, const Event& event) {
  std::lock_guard lock(mutex_);
  if (event.completed_ >= event.recorded_) return;  // nothing outstanding: no queue entry needed
  lanes_.at(static_cast<size_t>(lane))
      .queue.push_back(Item{Item::Kind::wait, {}, const_cast<Event*>(&event), event.recorded_});
  // No notify: a wait entry never makes a lane runnable.
}

bool Executor::ready(const Item& item) const {
  // After a failure waits are released so the lanes drain instead of deadlocking.
  return item.kind != Item::Kind::wait || item.event->completed_ >= item.target || failure_;
}

std::exception_ptr Executor::finish_stream(const ExecContext& exec) {
  try {
    backend_->finish_stream(exec.stream);
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

std::exception_ptr Executor::run_item(Item& item, const ExecContext& exec) {
  if (item.kind == Item::Kind::record) return finish_stream(exec);
  std::exception_ptr error;
  try {
    item.task(exec);
  } catch (...) {
    error = std::current_exception();
  }
  item.task = nullptr;  // release what the task captured before taking the lock
  return error;
}

void Executor::lane_loop(int index) {
  Lane& lane = lanes_[static_cast<size_t>(index)];
  NativeStream stream;
  std::exception_ptr bind_error;
  if (backend_ && !lane.host) {
    try {
      backend_->bind_thread(lane.device);
      stream = backend_->lane_stream(index, lane.device);
    } catch (...) {
      bind_error = std::current_exception();  // reported as the lane's failure below
    }
  }
  const ExecContext exec{*lane.pool, tracer_, lane.device, index, stream};
  std::unique_lock lock(mutex_);
  if (bind_error && !failure_) {
    failure_ = bind_error;
    changed_.notify_all();
  }
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || (!lane.queue.empty() && ready(lane.queue.front())); });
    if (stopping_) {
      run_remaining_finally(lane, exec, lock);
      return;
    }
    Item item = std::move(lane.queue.front());
    lane.queue.pop_front();
    const bool record = item.kind == Item::Kind::record;
    if (item.kind == Item::Kind::wait || (!record && failure_ && !item.always)) {  // a poisoned executor skips work
      if (lane.queue.empty()) changed_.notify_all();  // synchronize() may be waiting for this
      continue;
    }
    std::exception_ptr error;
    if (!record || exec.stream) {
      lane.busy = true;
      lock.unlock();
      error = run_item(item, exec);
      lock.lock();
      if (!record && !error && exec.stream && lane.queue.empty()) {
        lock.unlock();
        error = finish_stream(exec);
        lock.lock();
      }
      lane.busy = false;
    }
    if (record) item.event->completed_ = std::max(item.event->completed_, item.target);
    if (error && !failure_) failure_ = error;
    changed_.notify_all();
  }
}

void Executor::run_remaining_finally(Lane& lane, const ExecContext& exec, std::unique_lock<std::mutex>& lock) {
  while (!lane.queue.empty()) {
    Item item = std::move(lane.queue.front());
    lane.queue.pop_front();
    if (!item.always) continue;
    lock.unlock();
    run_item(item, exec);  // nobody is left to rethrow to
    lock.lock();
  }
}

void Executor::rethrow_failure(std::unique_lock<std::mutex>& lock) {
  if (!failure_) return;
  // Drain before clearing the failure, so no task submitted before it runs afterwards.
  changed_.wait(lock, [&] {
    for (const Lane& lane : lanes_)
      if (lane.busy || !lane.queue.empty()) return false;
    return true;
  });
  std::exception_ptr error = failure_;
  failure_ = nullptr;
  lock.unlock();
  std::rethrow_exception(error);
}

void Executor::host_wait(const Event& event) {
  std::unique_lock lock(mutex_);
  const uint64_t target = event.recorded_;
  changed_.wait(lock, [&] { return event.completed_ >= target || failure_; });
  rethrow_failure(lock);
}

void Executor::synchronize() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] {
    for (const Lane& lane : lanes_)
      if (lane.busy || !lane.queue.empty()) return false;
    return true;
  });
  rethrow_failure(lock);
}

}  // namespace tunescope
