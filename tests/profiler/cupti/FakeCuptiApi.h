// A CUPTI stand-in for tests without a GPU: records which calls the tracer made, serves
// hand-built activity buffers laid out as CUPTI lays them out (records back to back,
// 8-byte aligned, each starting with its kind), and reports a chosen dropped count.
#pragma once

#ifdef HAS_CUPTI

#include <cupti.h>

#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiler/cupti/CuptiApi.h"

namespace tunescope::profiler::cupti::test_support {

// The size of the record struct CUDA 13's CUPTI writes for each kind the tracer enables.
inline size_t record_size(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return sizeof(CUpti_ActivityCudaEvent2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    default: return 0;
  }
}

// Appends records to a buffer the tracer handed out; returns the valid byte count.
class BufferWriter {
 public:
  BufferWriter(uint8_t* buffer, size_t size) : buffer_(buffer), size_(size) {}
  template <typename Record>
  void add(const Record& record) {
    if (used_ + sizeof(Record) > size_) throw std::runtime_error("fake CUPTI buffer full");
    std::memcpy(buffer_ + used_, &record, sizeof(Record));
    used_ += sizeof(Record);
  }
  size_t valid_bytes() const { return used_; }

 private:
  uint8_t* buffer_;
  size_t size_;
  size_t used_ = 0;
};

class FakeCuptiApi final : public CuptiApi {
 public:
  CUptiResult enable(CUpti_ActivityKind kind) override {
    calls.push_back("enable " + std::to_string(kind));
    if (fail_enable_of.count(kind)) return CUPTI_ERROR_NOT_COMPATIBLE;
    enabled.push_back(kind);
    return CUPTI_SUCCESS;
  }
  CUptiResult disable(CUpti_ActivityKind kind) override {
    calls.push_back("disable " + std::to_string(kind));
    std::erase(enabled, kind);
    return CUPTI_SUCCESS;
  }
  CUptiResult register_callbacks(CUpti_BuffersCallbackRequestFunc req,
                                 CUpti_BuffersCallbackCompleteFunc done) override {
    calls.push_back("register");
    requested = req;
    completed = done;
    return CUPTI_SUCCESS;
  }
  CUptiResult next_record(uint8_t* buffer, size_t valid_bytes, CUpti_Activity** record) override {
    size_t offset = 0;
    if (*record) {
      offset = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer);
      offset += record_size((*record)->kind);
    }
    if (offset >= valid_bytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
    if (record_size((*record)->kind) == 0) return CUPTI_ERROR_INVALID_KIND;
    return CUPTI_SUCCESS;
  }
  CUptiResult dropped_records(CUcontext, uint32_t, size_t* dropped) override {
    *dropped = dropped_per_buffer;
    return CUPTI_SUCCESS;
  }
  CUptiResult flush_all(uint32_t flags) override {
    calls.push_back("flush " + std::to_string(flags));
    return CUPTI_SUCCESS;
  }
  // CUPTI keeps one stack per thread; the tests' ranges all open on one thread at a time.
  CUptiResult push_external_correlation(uint64_t id) override {
    std::lock_guard lock(correlation_mutex);
    if (refuse_correlation) return CUPTI_ERROR_INVALID_PARAMETER;
    correlation_stack.push_back(id);
    pushed.push_back(id);
    return CUPTI_SUCCESS;
  }
  CUptiResult pop_external_correlation() override {
    std::lock_guard lock(correlation_mutex);
    if (correlation_stack.empty()) return CUPTI_ERROR_QUEUE_EMPTY;
    correlation_stack.pop_back();
    return CUPTI_SUCCESS;
  }
  CUptiResult timestamp(uint64_t* ns) override {
    *ns = gpu_now;
    return timestamp_status;
  }
  std::string callback_name(CUpti_CallbackDomain domain, CUpti_CallbackId id) override {
    ++name_lookups;
    const auto it = names.find({domain, id});
    return it == names.end() ? std::string() : it->second;
  }

  // Asks the tracer for a buffer, lets `fill` write records, hands it back as completed.
  template <typename Fill>
  void deliver(Fill fill) {
    uint8_t* buffer = nullptr;
    size_t size = 0, max_records = 0;
    requested(&buffer, &size, &max_records);
    BufferWriter writer(buffer, size);
    fill(writer);
    completed(nullptr, 0, buffer, size, writer.valid_bytes());
  }

  std::vector<std::string> calls;
  std::vector<CUpti_ActivityKind> enabled;
  std::map<CUpti_ActivityKind, bool> fail_enable_of;
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  size_t dropped_per_buffer = 0;
  uint64_t gpu_now = 5'000'000'000;
  CUptiResult timestamp_status = CUPTI_SUCCESS;
  std::map<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>, std::string> names;
  int name_lookups = 0;
  std::mutex correlation_mutex;
  std::vector<uint64_t> correlation_stack;  // external ids open now, innermost last
  std::vector<uint64_t> pushed;             // every id ever pushed, in order
  bool refuse_correlation = false;
};

// Record builders with the fields the converter reads; the rest zero.
inline CUpti_ActivityKernel10 kernel_record(const char* name, uint64_t start, uint64_t end,
                                            uint32_t device, uint32_t stream,
                                            uint32_t correlation) {
  CUpti_ActivityKernel10 r{};
  r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  r.name = name;
  r.start = start;
  r.end = end;
  r.deviceId = device;
  r.streamId = stream;
  r.correlationId = correlation;
  return r;
}

inline CUpti_ActivityAPI runtime_record(CUpti_CallbackId cbid, uint64_t start, uint64_t end,
                                        uint32_t thread, uint32_t correlation) {
  CUpti_ActivityAPI r{};
  r.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  r.cbid = cbid;
  r.start = start;
  r.end = end;
  r.threadId = thread;
  r.correlationId = correlation;
  return r;
}

inline CUpti_ActivityMemcpy6 memcpy_record(uint8_t copy_kind, uint64_t bytes, uint64_t start,
                                           uint64_t end, uint32_t device, uint32_t stream,
                                           uint32_t correlation) {
  CUpti_ActivityMemcpy6 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  r.copyKind = copy_kind;
  r.bytes = bytes;
  r.start = start;
  r.end = end;
  r.deviceId = device;
  r.streamId = stream;
  r.correlationId = correlation;
  return r;
}

inline CUpti_ActivityMemset4 memset_record(uint64_t bytes, uint64_t start, uint64_t end,
                                           uint32_t device, uint32_t stream, uint32_t correlation) {
  CUpti_ActivityMemset4 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  r.bytes = bytes;
  r.start = start;
  r.end = end;
  r.deviceId = device;
  r.streamId = stream;
  r.correlationId = correlation;
  return r;
}

inline CUpti_ActivityCudaEvent2 cuda_event_record(uint32_t event, uint32_t device, uint32_t stream,
                                                  uint32_t correlation) {
  CUpti_ActivityCudaEvent2 r{};
  r.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  r.eventId = event;
  r.deviceId = device;
  r.streamId = stream;
  r.correlationId = correlation;
  return r;
}

inline CUpti_ActivitySynchronization2 synchronization_record(CUpti_ActivitySynchronizationType type,
                                                             uint64_t start, uint64_t end,
                                                             uint32_t context, uint32_t stream,
                                                             uint32_t correlation) {
  CUpti_ActivitySynchronization2 r{};
  r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  r.type = type;
  r.start = start;
  r.end = end;
  r.contextId = context;
  r.streamId = stream;
  r.correlationId = correlation;
  return r;
}

// What CUPTI writes before the API record of a call made while `external_id` was pushed.
inline CUpti_ActivityExternalCorrelation external_correlation_record(
    uint64_t external_id, uint32_t correlation,
    CUpti_ExternalCorrelationKind kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
  CUpti_ActivityExternalCorrelation r{};
  r.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  r.externalKind = kind;
  r.externalId = external_id;
  r.correlationId = correlation;
  return r;
}

}  // namespace tunescope::profiler::cupti::test_support

#endif  // HAS_CUPTI
