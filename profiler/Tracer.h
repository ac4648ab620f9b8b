// The CPU tracer: each recording thread appends to its own buffer without locks;
// collect() merges the buffers into a Trace once recording has stopped. On a backend
// with a device tracer (CUPTI on cuda, see DeviceTracer.h) the Tracer also drives that
// one, so every session's trace holds the device's activity next to the host ranges.
//
// Names are `const char*` that must outlive the tracer: string literals, or pointers
// returned by intern() for names built at run time (layer names).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/Clock.h"
#include "profiler/DeviceTracer.h"
#include "profiler/Nvtx.h"
#include "profiler/Trace.h"

namespace tunescope::profiler {

class Tracer {
 public:
  Tracer();
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // Recording is off until start(); records made while stopped are dropped cheaply.
  // Both start and stop (flush) the device tracer too, when one is attached.
  void start();
  void stop();
  bool recording() const { return recording_.load(std::memory_order_relaxed); }

  // A stable copy of `name` owned by the tracer (same pointer for equal names).
  const char* intern(std::string_view name);

  void record_activity(ActivityKind kind, const char* name, int device, int stream,
                       int64_t start_ns, int64_t end_ns, double flops = 0, double bytes = 0);
  void record_range(const char* name, RangeCategory category, int device, int lane,
                    int64_t start_ns, int64_t end_ns, uint64_t id = 0);
  // A dependency between lanes (the executor's event waits): a few per step against
  // many kernels, so one locked list serves instead of the per-thread buffers.
  void record_flow(const Flow& flow);

  // A range opened and closed on one thread, possibly by different tasks of one lane (the
  // trainer's phases). begin_range returns it opened, or not opened when not recording;
  // an opened range is also an NVTX push and, with a device tracer, an external
  // correlation push (device work launched inside carries its id), so end_range (which
  // pops both and records the range) must run on the same thread, and runs even if
  // recording stopped in between, to keep those stacks balanced. end_range leaves
  // `range` not opened: closing twice is harmless.
  static constexpr int64_t kRangeNotOpened = -1;
  struct OpenRange {
    int64_t start_ns = kRangeNotOpened;
    uint64_t id = 0;
    bool device_pushed = false;
    bool opened() const { return start_ns != kRangeNotOpened; }
  };
  OpenRange begin_range(const char* name, RangeCategory category) {
    if (!recording()) return {};
    OpenRange range;
    range.id = next_range_id_.fetch_add(1, std::memory_order_relaxed);
    nvtx::push_range(name, category);
    range.device_pushed = device_ && device_->push_range(range.id);
    range.start_ns = now_ns();
    return range;
  }
  void end_range(const char* name, RangeCategory category, int device, int lane, OpenRange& range) {
    if (!range.opened()) return;
    const int64_t end_ns = now_ns();
    if (range.device_pushed) device_->pop_range();
    nvtx::pop_range();
    record_range(name, category, device, lane, range.start_ns, end_ns, range.id);
    range = {};
  }

  // The device tracer started, stopped and collected with this tracer (CUPTI on the
  // cuda backend); attach before any thread records. Null: host records only.
  void attach_device_tracer(std::unique_ptr<DeviceTracer> device);
  DeviceTracer* device_tracer() const { return device_.get(); }

  // Merges every thread's records, and the device tracer's, into a Trace sorted by start
  // time, with the given metadata (plus the device tracer's name, counts and, when it
  // could not start, why: kDeviceTracer*Key). Call after stop() and after recording
  // threads are quiescent. Buffers are cleared, so the next start() begins an empty trace.
  Trace collect(TraceMetadata metadata);

  // Records made since the last collect (for overhead measurement and tests).
  size_t record_count() const;

 private:
  struct ThreadBuffer;
  ThreadBuffer& buffer_for_this_thread();

  const uint64_t id_;  // distinguishes tracers in the per-thread buffer cache
  std::atomic<bool> recording_{false};
  std::atomic<uint64_t> next_range_id_{1};  // never reused, so ids are unique in any trace
  std::unique_ptr<DeviceTracer> device_;
  bool device_started_ = false;
  std::string device_error_;  // why the device tracer did not start, for the metadata
  mutable std::mutex mutex_;  // guards buffers_ registration and names_
  std::vector<std::unique_ptr<ThreadBuffer>> buffers_;
  std::vector<Flow> flows_;  // guarded by mutex_
  struct NameTable;
  std::unique_ptr<NameTable> names_;
};

// RAII: records one kernel from construction to destruction (nothing when tracer is
// null or not recording). For kernels that run on the calling thread (cpu); device
// kernels are recorded by the device tracer, and code that launches them labels them
// with a RangeScope instead (a KernelScope there would time the launch as a kernel).
class KernelScope {
 public:
  KernelScope(Tracer* tracer, const char* name, int device, int lane, double flops = 0,
              double bytes = 0, ActivityKind kind = ActivityKind::kernel)
      : tracer_(tracer && tracer->recording() ? tracer : nullptr),
        name_(name),
        device_(device),
        lane_(lane),
        flops_(flops),
        bytes_(bytes),
        kind_(kind),
        start_(tracer_ ? now_ns() : 0) {}
  ~KernelScope() {
    if (tracer_)
      tracer_->record_activity(kind_, name_, device_, lane_, start_, now_ns(), flops_, bytes_);
  }
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

 private:
  Tracer* tracer_;
  const char* name_;
  int device_, lane_;
  double flops_, bytes_;
  ActivityKind kind_;
  int64_t start_;
};

// RAII: records one range (run, iteration, layer, phase) from construction to destruction,
// and pushes it as an NVTX range and a device correlation meanwhile (Tracer::begin_range).
class RangeScope {
 public:
  RangeScope(Tracer* tracer, const char* name, RangeCategory category, int device = 0, int lane = 0)
      : tracer_(tracer),
        name_(name),
        category_(category),
        device_(device),
        lane_(lane),
        range_(tracer ? tracer->begin_range(name, category) : Tracer::OpenRange{}) {}
  ~RangeScope() {
    if (tracer_) tracer_->end_range(name_, category_, device_, lane_, range_);
  }
  RangeScope(const RangeScope&) = delete;
  RangeScope& operator=(const RangeScope&) = delete;

 private:
  Tracer* tracer_;
  const char* name_;
  RangeCategory category_;
  int device_, lane_;
  Tracer::OpenRange range_;
};

}  // namespace tunescope::profiler
