// CPU streams: ordered execution lanes with their own thread pools, and events for
// dependencies between lanes (record on one lane, wait on another), with the semantics
// of CUDA streams and events so the same schedule maps onto cudaStream_t later.
//
// A lane is one worker thread that runs the tasks submitted to it in order; kernels of
// a task parallelise on the lane's ThreadPool, which the lane thread joins. Only one
// thread (the host) submits. A task that throws poisons the executor: every lane skips
// its remaining tasks (except those submitted with submit_finally), waits are released,
// and the first exception is rethrown on the host by synchronize() or host_wait(); the
// executor is usable again afterwards.
//
// While its tracer records, the executor also records what each task waited for as
// trace flows (profiler::Flow): an event recorded on one lane and waited on by another
// (FlowKind::event), and the host's waits (host_wait, synchronize) before it submitted
// to a lane (FlowKind::host). Order within a lane is implicit in the trace.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/base/Backend.h"
#include "core/base/CpuAffinity.h"
#include "core/base/ExecContext.h"
#include "core/base/ThreadPool.h"
#include "profiler/Trace.h"

namespace tunescope {

class Executor;

// A point in a lane's task order. Recording it again moves the point; a wait binds to
// the most recent record made before the wait was submitted (as cudaStreamWaitEvent).
// Belongs to one executor; all fields are guarded by the executor's mutex.
class Event {
 public:
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

 private:
  friend class Executor;
  uint64_t recorded_ = 0;   // records submitted
  uint64_t completed_ = 0;  // highest record reached by its lane
  // Where the last few records were reached (lane and time), for the trace's flows: a
  // wait binds to one record, which may be overtaken by later ones before the waiting
  // lane gets there.
  struct Reached {
    uint64_t target = 0;
    profiler::FlowEnd where;
  };
  static constexpr size_t kReachedKept = 4;
  Reached reached_[kReachedKept];
};

class Executor {
 public:
  using Task = std::function<void(const ExecContext&)>;

  // `lanes` lanes, each with a pool of `threads_per_lane` threads (the lane thread
  // included). Lane i runs on device lane_devices[i] (all on device 0 when empty): its
  // thread is bound to it (backend->bind_thread) and its kernels see ExecContext{pool,
  // tracer, device, lane id, backend->lane_stream(lane id, device)}. With a backend whose lanes
  // have native streams, a lane finishes its stream's work before an event recorded on it completes
  // and before it goes idle, so events and synchronize() order device work too. The last
  // `host_lanes` lanes run host work beside the device (the update on the host): their
  // threads are not bound and get no stream (a null ExecContext::stream), and they keep
  // lane_devices' entry only to be traced beside that device's lanes.
  // With CpuBinding::cores every thread of the executor gets a CPU of its own from the
  // process's allowed set, lane by lane (the lane thread, then its pool's workers); more
  // threads than allowed CPUs is an Error(usage) naming cpu_binding.
  Executor(int lanes, int threads_per_lane, profiler::Tracer* tracer, Backend* backend = nullptr,
           std::vector<int> lane_devices = {}, int host_lanes = 0,
           CpuBinding binding = CpuBinding::off);
  // Lets running tasks finish, drops the ones not started, joins the lanes.
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  int lane_count() const { return static_cast<int>(lanes_.size()); }
  int threads_per_lane() const { return threads_per_lane_; }
  // Per lane, the CPUs its threads were bound to (lane thread first); empty when unbound.
  const std::vector<std::vector<int>>& lane_cpus() const { return lane_cpus_; }

  void submit(int lane, Task task);
  // Like submit, but the task also runs when the executor is poisoned or destroyed
  // before reaching it: the unwind guard of a lane, for a task that closes what an
  // earlier task of the lane opened on the lane's thread (a trace phase spanning several
  // tasks, whose NVTX and device-correlation pushes must be popped on that thread).
  void submit_finally(int lane, Task task);
  // Marks the current end of `lane`'s queue: the event completes when the lane reaches it.
  void record(int lane, Event& event);
  // `lane` runs nothing submitted after this until `event`'s latest record has completed.
  // An event never recorded is complete.
  void wait(int lane, const Event& event);
  // Blocks the host until `event`'s latest record has completed; rethrows a task's error.
  void host_wait(const Event& event);
  // Blocks the host until every lane has run out of tasks; rethrows a task's error.
  void synchronize();

 private:
  struct Item {
    enum class Kind { run, record, wait } kind;
    Task task;
    Event* event = nullptr;
    uint64_t target = 0;
    bool always = false;  // submit_finally: runs even when poisoned or stopping
    std::vector<profiler::FlowEnd>
        host_waited{};  // traced: what the host waited for before submitting this
  };
  struct Lane {
    std::deque<Item> queue;
    bool busy = false;  // running a task outside the lock
    // Traced flows: where this lane's last task ended, the sources of the waits passed
    // since, and the host's waits since the host last submitted here.
    profiler::FlowEnd last_end{0, 0, -1};
    std::vector<profiler::Flow> pending_waits;
    uint64_t host_fence_seen = 0;
    std::unique_ptr<ThreadPool> pool;
    int device = 0;
    bool host = false;  // a host lane: no device binding, no stream
    std::thread thread;
  };

  void lane_loop(int lane);
  void bind_lanes(const std::vector<int>& cpus);  // in the constructor, lanes started
  void stop_lanes();                              // lets running tasks finish, joins
  // On destruction: runs the submit_finally tasks still queued on the lane; under mutex_.
  void run_remaining_finally(Lane& lane, const ExecContext& exec,
                             std::unique_lock<std::mutex>& lock);
  // Runs a task, or for a record item finishes the lane's device work; returns its error.
  std::exception_ptr run_item(Item& item, const ExecContext& exec);
  std::exception_ptr finish_stream(const ExecContext& exec);
  bool ready(const Item& item) const;  // under mutex_
  bool tracing() const;
  Item run_item_for(int lane, Task task, bool always);   // under mutex_: attaches the host's waits
  void note_host_wait(const profiler::FlowEnd& source);  // under mutex_
  // Under mutex_: a wait item reached by `lane`; its source becomes a flow of the next task.
  void note_wait(int lane, const Item& item);
  void emit_flows(Lane& lane, const Item& item, int64_t start_ns);  // outside mutex_
  void rethrow_failure(std::unique_lock<std::mutex>& lock);
  // The host (the one thread that submits and waits) sleeps on a condition variable of its
  // own, and a lane wakes it only when what it waits for may have happened: once per step
  // instead of once per record (a context switch each, on the CPU the lane's pool worker
  // was using). All under mutex_.
  enum class HostWait { nothing, event, idle_lanes };
  bool lanes_idle() const;
  bool host_wait_over() const;
  void wake_host_if_done();
  template <class Done>
  void host_wait_until(std::unique_lock<std::mutex>& lock, HostWait what, const Done& done);

  profiler::Tracer* tracer_;
  Backend* backend_;
  int threads_per_lane_;
  std::vector<std::vector<int>> lane_cpus_;
  std::vector<Lane> lanes_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;  // any queue, event or failure change: the lanes wait on it
  std::condition_variable host_changed_;  // what the host waits for may have happened
  HostWait host_waits_for_ = HostWait::nothing;
  const Event* host_event_ = nullptr;  // HostWait::event: this event reaching host_target_
  uint64_t host_target_ = 0;
  std::exception_ptr failure_;
  bool stopping_ = false;
  // Traced: the lane ends the host waited for since its last fence change, and a
  // counter that tells lanes a new set of them exists.
  std::vector<profiler::FlowEnd> host_waited_;
  uint64_t host_fence_ = 0;
  bool host_submitted_ = false;  // since the last host wait
};

}  // namespace tunescope
