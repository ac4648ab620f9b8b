// The CPU tracer: each recording thread appends to its own buffer without locks;
// collect() merges the buffers into a Trace once recording has stopped.
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
  void start();
  void stop();
  bool recording() const { return recording_.load(std::memory_order_relaxed); }

  // A stable copy of `name` owned by the tracer (same pointer for equal names).
  const char* intern(std::string_view name);

  void record_activity(ActivityKind kind, const char* name, int device, int stream,
                       int64_t start_ns, int64_t end_ns, double flops = 0, double bytes = 0);
  void record_range(const char* name, RangeCategory category, int device, int lane,
                    int64_t start_ns, int64_t end_ns);

  // A range opened and closed on one thread, possibly by different tasks of one lane (the
  // trainer's phases). begin_range returns its start, or kRangeNotOpened when not
  // recording; an opened range is also an NVTX push, so end_range (which pops it and
  // records the range) must run on the same thread, and runs even if recording stopped
  // in between, to keep the NVTX stack balanced.
  static constexpr int64_t kRangeNotOpened = -1;
  int64_t begin_range(const char* name, RangeCategory category) {
    if (!recording()) return kRangeNotOpened;
    nvtx::push_range(name, category);
    return now_ns();
  }
  void end_range(const char* name, RangeCategory category, int device, int lane, int64_t start_ns) {
    if (start_ns == kRangeNotOpened) return;
    const int64_t end_ns = now_ns();
    nvtx::pop_range();
    record_range(name, category, device, lane, start_ns, end_ns);
  }

  // Merges every thread's records into a Trace sorted by start time, with the given
  // metadata. Call after stop() and after recording threads are quiescent. Buffers are
  // cleared, so the next start() begins an empty trace.
  Trace collect(TraceMetadata metadata);

  // Records made since the last collect (for overhead measurement and tests).
  size_t record_count() const;

 private:
  struct ThreadBuffer;
  ThreadBuffer& buffer_for_this_thread();

  const uint64_t id_;  // distinguishes tracers in the per-thread buffer cache
  std::atomic<bool> recording_{false};
  mutable std::mutex mutex_;  // guards buffers_ registration and names_
  std::vector<std::unique_ptr<ThreadBuffer>> buffers_;
  struct NameTable;
  std::unique_ptr<NameTable> names_;
};

// RAII: records one kernel from construction to destruction (nothing when tracer is
// null or not recording).
class KernelScope {
 public:
  KernelScope(Tracer* tracer, const char* name, int device, int lane, double flops = 0,
              double bytes = 0, ActivityKind kind = ActivityKind::kernel)
      : tracer_(tracer && tracer->recording() ? tracer : nullptr),
        name_(name), device_(device), lane_(lane), flops_(flops), bytes_(bytes), kind_(kind),
        start_(tracer_ ? now_ns() : 0) {}
  ~KernelScope() {
    if (tracer_) tracer_->record_activity(kind_, name_, device_, lane_, start_, now_ns(), flops_, bytes_);
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
// and pushes it as an NVTX range meanwhile (Tracer::begin_range).
class RangeScope {
 public:
  RangeScope(Tracer* tracer, const char* name, RangeCategory category, int device = 0, int lane = 0)
      : tracer_(tracer), name_(name), category_(category), device_(device), lane_(lane),
        start_(tracer ? tracer->begin_range(name, category) : Tracer::kRangeNotOpened) {}
  ~RangeScope() {
    if (tracer_) tracer_->end_range(name_, category_, device_, lane_, start_);
  }
  RangeScope(const RangeScope&) = delete;
  RangeScope& operator=(const RangeScope&) = delete;

 private:
  Tracer* tracer_;
  const char* name_;
  RangeCategory category_;
  int device_, lane_;
  int64_t start_;
};

}  // namespace tunescope::profiler
