// CUPTI record -> Activity conversion and clock normalisation (see CuptiActivityConverter.h).
#ifdef HAS_CUPTI

#include "profiler/cupti/CuptiActivityConverter.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>

#include "profiler/NsysSqlite.h"

namespace tunescope::profiler::cupti {

namespace {

template <typename Record>
void set_times(Activity& a, const Record& record, const GpuClockOffset& clock) {
  a.start_ns = clock.to_host(record.start);
  a.end_ns = clock.to_host(record.end);
}

// CUPTI writes 0 for timestamps it could not collect (e.g. a kernel still running when a
// buffer was flushed by force); such a record would land at the epoch of the GPU clock.
template <typename Record>
bool has_times(const Record& record) {
  return record.start != 0 && record.end >= record.start;
}

}  // namespace

GpuClockOffset clock_offset_from_samples(int64_t host_before_ns, uint64_t gpu_ns,
                                         int64_t host_after_ns) {
  const int64_t host_mid = host_before_ns + (host_after_ns - host_before_ns) / 2;
  return {host_mid - static_cast<int64_t>(gpu_ns)};
}

std::string demangle(const char* name) {
  if (!name) return "<unnamed kernel>";
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : std::string(name);
}

std::string api_display_name(const std::string& callback_name) {
  const auto v = callback_name.rfind("_v");
  if (v == std::string::npos || v + 2 >= callback_name.size()) return callback_name;
  for (size_t i = v + 2; i < callback_name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(callback_name[i]))) return callback_name;
  return callback_name.substr(0, v);
}

std::string synchronization_name(CUpti_ActivitySynchronizationType type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "Synchronize event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "Stream wait event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "Synchronize stream";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "Synchronize context";
    default: return "Synchronize";
  }
}

std::string overhead_name(CUpti_ActivityOverheadKind kind) {
  const char* what = "unknown";
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: what = "driver compiler"; break;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: what = "buffer flush"; break;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: what = "instrumentation"; break;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: what = "resource"; break;
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: what = "module loading"; break;
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: what = "lazy function loading"; break;
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: what = "command buffer full"; break;
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: what = "activity buffer request"; break;
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: what = "UVM activity init"; break;
    default: break;
  }
  return std::string("CUPTI overhead: ") + what;
}

Activity kernel_activity(const CUpti_ActivityKernel10& record, const GpuClockOffset& clock) {
  Activity a;
  a.kind = ActivityKind::kernel;
  a.name = demangle(record.name);
  a.device = static_cast<int>(record.deviceId);
  a.stream = static_cast<int>(record.streamId);
  a.correlation = record.correlationId;
  set_times(a, record, clock);
  return a;
}

Activity memcpy_activity(const CUpti_ActivityMemcpy6& record, const GpuClockOffset& clock) {
  Activity a;
  a.kind = ActivityKind::memcpy;
  a.name = "Memcpy " + nsys::copy_kind_name(record.copyKind);
  a.device = static_cast<int>(record.deviceId);
  a.stream = static_cast<int>(record.streamId);
  a.correlation = record.correlationId;
  a.bytes = static_cast<double>(record.bytes);
  set_times(a, record, clock);
  return a;
}

Activity memset_activity(const CUpti_ActivityMemset4& record, const GpuClockOffset& clock) {
  Activity a;
  a.kind = ActivityKind::memset;
  a.name = "Memset";
  a.device = static_cast<int>(record.deviceId);
  a.stream = static_cast<int>(record.streamId);
  a.correlation = record.correlationId;
  a.bytes = static_cast<double>(record.bytes);
  set_times(a, record, clock);
  return a;
}

Activity synchronization_activity(const CUpti_ActivitySynchronization2& record, int device,
                                  const GpuClockOffset& clock) {
  Activity a;
  a.kind = ActivityKind::sync;
  a.name = synchronization_name(record.type);
  a.device = device;
  // Context synchronisation has no stream: CUPTI reports CUPTI_SYNCHRONIZATION_INVALID_VALUE.
  a.stream = record.streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE
                 ? 0
                 : static_cast<int>(record.streamId);
  a.correlation = record.correlationId;
  set_times(a, record, clock);
  return a;
}

Activity overhead_activity(const CUpti_ActivityOverhead3& record, const GpuClockOffset& clock) {
  Activity a;
  a.kind = ActivityKind::overhead;
  a.name = overhead_name(record.overheadKind);
  switch (record.objectKind) {
    case CUPTI_ACTIVITY_OBJECT_DEVICE:
    case CUPTI_ACTIVITY_OBJECT_CONTEXT:
    case CUPTI_ACTIVITY_OBJECT_STREAM:
      a.device = static_cast<int>(record.objectId.dcs.deviceId);
      a.stream = record.objectKind == CUPTI_ACTIVITY_OBJECT_STREAM
                     ? static_cast<int>(record.objectId.dcs.streamId)
                     : 0;
      break;
    default:  // process or thread: host side, as API records
      a.device = -1;
      a.stream = static_cast<int>(record.objectId.pt.threadId);
      break;
  }
  a.correlation = record.correlationId;
  set_times(a, record, clock);
  return a;
}

Activity api_activity(const CUpti_ActivityAPI& record, std::string name,
                      const GpuClockOffset& clock) {
  Activity a;
  a.kind = ActivityKind::overhead;
  a.name = std::move(name);
  a.device = -1;
  a.stream = static_cast<int>(record.threadId);
  a.correlation = record.correlationId;
  set_times(a, record, clock);
  return a;
}

CuptiRecordConverter::CuptiRecordConverter(GpuClockOffset clock, ApiNameLookup api_name)
    : clock_(clock), api_name_(std::move(api_name)) {}

uint64_t CuptiRecordConverter::range_of(uint64_t correlation) const {
  const auto it = range_of_correlation_.find(correlation);
  return it == range_of_correlation_.end() ? 0 : it->second;
}

bool CuptiRecordConverter::convert(const CUpti_Activity& record, std::vector<Activity>& out) {
  // Every record type starts with its kind; the kind says which struct it is.
  auto keep = [&](auto& typed, auto make) {
    if (!has_times(typed)) {
      ++incomplete_;
      return false;
    }
    out.push_back(make());
    return true;
  };
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& r = reinterpret_cast<const CUpti_ActivityKernel10&>(record);
      return keep(r, [&] { return kernel_activity(r, clock_); });
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& r = reinterpret_cast<const CUpti_ActivityMemcpy6&>(record);
      return keep(r, [&] { return memcpy_activity(r, clock_); });
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& r = reinterpret_cast<const CUpti_ActivityMemset4&>(record);
      return keep(r, [&] { return memset_activity(r, clock_); });
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& r = reinterpret_cast<const CUpti_ActivitySynchronization2&>(record);
      const auto device = device_of_context_.find(r.contextId);
      if (r.type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT &&
          r.streamId != CUPTI_SYNCHRONIZATION_INVALID_VALUE)
        event_waits_.push_back({r.cudaEventId,
                                device == device_of_context_.end() ? 0 : device->second,
                                static_cast<int>(r.streamId), r.correlationId});
      return keep(r, [&] {
        return synchronization_activity(r, device == device_of_context_.end() ? 0 : device->second,
                                        clock_);
      });
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto& r = reinterpret_cast<const CUpti_ActivityOverhead3&>(record);
      return keep(r, [&] { return overhead_activity(r, clock_); });
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& r = reinterpret_cast<const CUpti_ActivityAPI&>(record);
      const CUpti_CallbackDomain domain = record.kind == CUPTI_ACTIVITY_KIND_RUNTIME
                                              ? CUPTI_CB_DOMAIN_RUNTIME_API
                                              : CUPTI_CB_DOMAIN_DRIVER_API;
      return keep(r, [&] {
        auto [it, added] = api_names_.try_emplace({static_cast<int>(domain), r.cbid});
        if (added) {
          const std::string name = api_name_ ? api_name_(domain, r.cbid) : std::string();
          it->second = name.empty() ? "CUDA API " + std::to_string(r.cbid) : api_display_name(name);
        }
        return api_activity(r, it->second, clock_);
      });
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto& r = reinterpret_cast<const CUpti_ActivityExternalCorrelation&>(record);
      // Other kinds are other tools' (OpenACC, a framework sharing the process).
      if (r.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        range_of_correlation_[r.correlationId] = r.externalId;
      return false;
    }
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
      const auto& r = reinterpret_cast<const CUpti_ActivityCudaEvent2&>(record);
      event_records_.push_back(
          {r.eventId, static_cast<int>(r.deviceId), static_cast<int>(r.streamId), r.correlationId});
      return false;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      const auto& r = reinterpret_cast<const CUpti_ActivityContext3&>(record);
      device_of_context_[r.contextId] = static_cast<int>(r.deviceId);
      return false;
    }
    default: ++ignored_; return false;
  }
}

}  // namespace tunescope::profiler::cupti

#endif  // HAS_CUPTI
