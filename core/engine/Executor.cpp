// The lane threads: one mutex for queues, events and failure, one condition variable the
// lanes wait on and one the host waits on. Tasks are coarse (a layer's kernel), so the shared lock
// is never contended for long, and waiting for an event needs no extra thread or callback
// machinery.
#include "core/engine/Executor.h"

#include <algorithm>

#include "core/base/Error.h"
#include "profiler/Tracer.h"

namespace tunescope {

Executor::Executor(int lanes, int threads_per_lane, profiler::Tracer* tracer, Backend* backend,
                   std::vector<int> lane_devices, int host_lanes, CpuBinding binding)
    : tracer_(tracer),
      backend_(backend),
      threads_per_lane_(threads_per_lane),
      lanes_(static_cast<size_t>(lanes)) {
  if (lanes < 1) fail(ErrorKind::usage, "an executor needs >= 1 lane, got ", lanes);
  if (threads_per_lane < 1)
    fail(ErrorKind::usage, "threads per lane must be >= 1, got ", threads_per_lane);
  if (!lane_devices.empty() && lane_devices.size() != lanes_.size())
    fail(ErrorKind::runtime, "executor: devices for ", lane_devices.size(), " lanes, but ", lanes,
         " lanes");
  if (host_lanes < 0 || host_lanes > lanes)
    fail(ErrorKind::runtime, "executor: ", host_lanes, " host lanes of ", lanes, " lanes");
  for (size_t i = 0; i < lanes_.size(); ++i) {
    lanes_[i].pool = std::make_unique<ThreadPool>(threads_per_lane);
    if (!lane_devices.empty()) lanes_[i].device = lane_devices[i];
    lanes_[i].host = static_cast<int>(i) >= lanes - host_lanes;
  }
  std::vector<int> cpus;
  if (binding == CpuBinding::cores) {
    // Checked before any thread starts: a half-bound executor would be a different run.
    cpus = allowed_cpus();
    const std::string refusal =
        cpu_binding_refusal(int64_t{lanes} * threads_per_lane,
                            cat(lanes, " lanes x ", threads_per_lane, " threads"), cpus);
    if (!refusal.empty()) fail(ErrorKind::usage, refusal);
  }
  for (int i = 0; i < lanes; ++i)
    lanes_[static_cast<size_t>(i)].thread = std::thread([this, i] { lane_loop(i); });
  if (cpus.empty()) return;
  try {
    bind_lanes(cpus);
  } catch (...) {
    stop_lanes();  // the destructor does not run for a constructor that throws
    throw;
  }
}

void Executor::bind_lanes(const std::vector<int>& cpus) {
  size_t next = 0;
  for (size_t i = 0; i < lanes_.size(); ++i) {
    Lane& lane = lanes_[i];
    std::vector<int>& mine = lane_cpus_.emplace_back();
    mine.push_back(cpus[next++]);
    bind_thread_to_cpu(lane.thread.native_handle(), mine.back(), cat("lane ", i));
    const std::vector<std::thread::native_handle_type> workers = lane.pool->worker_handles();
    for (size_t w = 0; w < workers.size(); ++w) {
      mine.push_back(cpus[next++]);
      bind_thread_to_cpu(workers[w], mine.back(), cat("lane ", i, " worker ", w + 1));
    }
  }
}

Executor::~Executor() { stop_lanes(); }

void Executor::stop_lanes() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (Lane& lane : lanes_)
    if (lane.thread.joinable()) lane.thread.join();
}

bool Executor::tracing() const { return tracer_ && tracer_->recording(); }

Executor::Item Executor::run_item_for(int lane, Task task, bool always) {
  Item item{Item::Kind::run, std::move(task), nullptr, 0, always};
  Lane& target = lanes_.at(static_cast<size_t>(lane));
  host_submitted_ = true;
  if (target.host_fence_seen != host_fence_) {
    target.host_fence_seen = host_fence_;
    if (tracing()) item.host_waited = host_waited_;
  }
  return item;
}

void Executor::note_host_wait(const profiler::FlowEnd& source) {
  if (!tracing() || source.ns < 0) return;
  if (host_submitted_)
    host_waited_.clear();  // a new fence: the old one bound what was submitted since
  host_submitted_ = false;
  host_waited_.push_back(source);
  ++host_fence_;
}

void Executor::note_wait(int lane, const Item& item) {
  if (!tracing()) return;
  const Event::Reached& reached = item.event->reached_[item.target % Event::kReachedKept];
  if (reached.target != item.target || reached.where.ns < 0) return;  // overtaken: not traced
  lanes_[static_cast<size_t>(lane)].pending_waits.push_back(
      profiler::Flow{profiler::FlowKind::event, reached.where, {}});
}

void Executor::emit_flows(Lane& lane, const Item& item, int64_t start_ns) {
  const profiler::FlowEnd to{lane.device, static_cast<int>(&lane - lanes_.data()), start_ns};
  const auto emit = [&](profiler::FlowKind kind, const profiler::FlowEnd& from) {
    if (from.device == to.device && from.stream == to.stream) return;  // lane order says it already
    tracer_->record_flow(profiler::Flow{kind, from, to});
  };
  for (const profiler::Flow& wait : lane.pending_waits) emit(profiler::FlowKind::event, wait.from);
  for (const profiler::FlowEnd& from : item.host_waited) emit(profiler::FlowKind::host, from);
}

void Executor::submit(int lane, Task task) {
  {
    std::lock_guard lock(mutex_);
    Item item = run_item_for(lane, std::move(task), false);
    lanes_.at(static_cast<size_t>(lane)).queue.push_back(std::move(item));
  }
  changed_.notify_all();
}

void Executor::submit_finally(int lane, Task task) {
  {
    std::lock_guard lock(mutex_);
    Item item = run_item_for(lane, std::move(task), true);
    lanes_.at(static_cast<size_t>(lane)).queue.push_back(std::move(item));
  }
  changed_.notify_all();
}

void Executor::record(int lane, Event& event) {
  {
    std::lock_guard lock(mutex_);
    lanes_.at(static_cast<size_t>(lane))
        .queue.push_back(Item{Item::Kind::record, {}, &event, ++event.recorded_});
  }
  changed_.notify_all();
}

void Executor::wait(int lane, const Event& event) {
  bool complete = false;
  {
    std::lock_guard lock(mutex_);
    complete = event.completed_ >= event.recorded_;
    // Nothing outstanding needs no queue entry, unless the trace records the dependency.
    if (event.recorded_ == 0 || (complete && !tracing())) return;
    lanes_.at(static_cast<size_t>(lane))
        .queue.push_back(Item{Item::Kind::wait, {}, const_cast<Event*>(&event), event.recorded_});
  }
  // An outstanding wait never makes a lane runnable; a complete one may end its queue,
  // which synchronize() waits for.
  if (complete) changed_.notify_all();
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
    wake_host_if_done();
  }
  for (;;) {
    changed_.wait(lock,
                  [&] { return stopping_ || (!lane.queue.empty() && ready(lane.queue.front())); });
    if (stopping_) {
      run_remaining_finally(lane, exec, lock);
      return;
    }
    Item item = std::move(lane.queue.front());
    lane.queue.pop_front();
    const bool record = item.kind == Item::Kind::record;
    if (item.kind == Item::Kind::wait) note_wait(index, item);
    if (item.kind == Item::Kind::wait ||
        (!record && failure_ && !item.always)) {    // a poisoned executor skips work
      if (lane.queue.empty()) wake_host_if_done();  // synchronize() may be waiting for this
      continue;
    }
    std::exception_ptr error;
    if (!record || exec.stream) {
      lane.busy = true;
      const bool traced = !record && tracing();
      lock.unlock();
      if (traced)
        emit_flows(lane, item,
                   profiler::now_ns());  // only this lane's thread touches pending_waits
      lane.pending_waits.clear();
      error = run_item(item, exec);
      const int64_t end_ns = traced ? profiler::now_ns() : -1;
      lock.lock();
      if (traced) lane.last_end = {lane.device, index, end_ns};
      if (!record && !error && exec.stream && lane.queue.empty()) {
        lock.unlock();
        error = finish_stream(exec);
        lock.lock();
      }
      lane.busy = false;
    }
    if (record) {
      item.event->completed_ = std::max(item.event->completed_, item.target);
      item.event->reached_[item.target % Event::kReachedKept] = {item.target, lane.last_end};
    }
    if (error && !failure_) failure_ = error;
    // Lanes wait for an event (a record) or a failure, the host for one event, a failure or
    // the lanes to run dry; after a plain task with more queued behind it none of that
    // changed, and waking the host thread after every kernel, or every record, took a
    // context switch each from two cores.
    if (record || error) changed_.notify_all();  // another lane may wait for the event
    if (record || error || lane.queue.empty()) wake_host_if_done();
  }
}

void Executor::run_remaining_finally(Lane& lane, const ExecContext& exec,
                                     std::unique_lock<std::mutex>& lock) {
  while (!lane.queue.empty()) {
    Item item = std::move(lane.queue.front());
    lane.queue.pop_front();
    if (!item.always) continue;
    lock.unlock();
    run_item(item, exec);  // nobody is left to rethrow to
    lock.lock();
  }
}

bool Executor::lanes_idle() const {
  for (const Lane& lane : lanes_)
    if (lane.busy || !lane.queue.empty()) return false;
  return true;
}

bool Executor::host_wait_over() const {
  switch (host_waits_for_) {
    case HostWait::nothing: return false;
    case HostWait::event: return failure_ || host_event_->completed_ >= host_target_;
    case HostWait::idle_lanes: return lanes_idle();
  }
  return true;
}

void Executor::wake_host_if_done() {
  if (host_wait_over()) host_changed_.notify_all();
}

template <class Done>
void Executor::host_wait_until(std::unique_lock<std::mutex>& lock, HostWait what,
                               const Done& done) {
  host_waits_for_ = what;
  host_changed_.wait(lock, done);
  host_waits_for_ = HostWait::nothing;
}

void Executor::rethrow_failure(std::unique_lock<std::mutex>& lock) {
  if (!failure_) return;
  // Drain before clearing the failure, so no task submitted before it runs afterwards.
  host_wait_until(lock, HostWait::idle_lanes, [&] { return lanes_idle(); });
  std::exception_ptr error = failure_;
  failure_ = nullptr;
  lock.unlock();
  std::rethrow_exception(error);
}

void Executor::host_wait(const Event& event) {
  std::unique_lock lock(mutex_);
  const uint64_t target = event.recorded_;
  host_event_ = &event;
  host_target_ = target;
  host_wait_until(lock, HostWait::event,
                  [&] { return event.completed_ >= target || failure_ != nullptr; });
  if (target > 0) {
    const Event::Reached& reached = event.reached_[target % Event::kReachedKept];
    if (reached.target == target) note_host_wait(reached.where);
  }
  rethrow_failure(lock);
}

void Executor::synchronize() {
  std::unique_lock lock(mutex_);
  host_wait_until(lock, HostWait::idle_lanes, [&] { return lanes_idle(); });
  for (const Lane& lane : lanes_) note_host_wait(lane.last_end);
  rethrow_failure(lock);
}

}  // namespace tunescope
