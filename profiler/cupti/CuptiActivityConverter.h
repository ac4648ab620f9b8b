// CUPTI activity records -> profiler::Activity: pure functions per record type (CUDA 13
// headers: CUpti_ActivityKernel10, Memcpy6, Memset4, Synchronization2, Overhead3, API),
// and the normalisation of CUPTI's GPU timestamps to the host clock of every trace
// (profiler::now_ns) with an offset measured when tracing starts. Only with HAS_CUPTI.
//
// Mapping (the conventions of the nsys SQLite reader/writer, so traces compare):
//  kernel   -> kernel "<demangled name>", device, stream = CUDA stream id
//  memcpy   -> memcpy "Memcpy HtoD" (DtoH, DtoD, ...), bytes
//  memset   -> memset "Memset", bytes
//  sync     -> sync "Synchronize stream" (event, context, stream wait event), device from
//              the context's CONTEXT record
//  overhead -> overhead "CUPTI overhead: <kind>" on the device or host thread it hit
//  runtime/driver API -> overhead "<cudaLaunchKernel>" on device -1 (host), stream = OS
//              thread id; its correlation id links it to the kernel it launched.
//  CUDA event record, stream wait event -> kept (event_records, event_waits) for the
//              event flows between streams (profiler/CudaEventFlows.h)
//  external correlation (CUSTOM0) -> no activity: remembered as correlation id -> the id
//              of the host Range the API call was made in (range_of), for every record
//              with that correlation id (the call, its kernel, memcpy or memset).
#pragma once

#ifdef HAS_CUPTI

#include <cupti.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "profiler/CudaEventFlows.h"
#include "profiler/Trace.h"

namespace tunescope::profiler::cupti {

// host_ns = gpu_ns + gpu_to_host_ns.
struct GpuClockOffset {
  int64_t gpu_to_host_ns = 0;
  int64_t to_host(uint64_t gpu_ns) const { return static_cast<int64_t>(gpu_ns) + gpu_to_host_ns; }
};

// From a GPU timestamp taken between two host readings: the GPU reading is matched to
// the host midpoint, so the error is at most half the sampling window.
GpuClockOffset clock_offset_from_samples(int64_t host_before_ns, uint64_t gpu_ns,
                                         int64_t host_after_ns);

// "void scale<float>(float*, int)" from a mangled "_Z5scaleIfEvPfi"; unchanged when the
// name is not mangled or cannot be demangled.
std::string demangle(const char* name);
// "cudaLaunchKernel" from "cudaLaunchKernel_v7000": CUPTI's callback names carry the
// API version they appeared in.
std::string api_display_name(const std::string& callback_name);
// "Synchronize stream", "Synchronize event", "Synchronize context", "Stream wait event".
std::string synchronization_name(CUpti_ActivitySynchronizationType type);
// "CUPTI overhead: buffer flush", ...
std::string overhead_name(CUpti_ActivityOverheadKind kind);

Activity kernel_activity(const CUpti_ActivityKernel10& record, const GpuClockOffset& clock);
Activity memcpy_activity(const CUpti_ActivityMemcpy6& record, const GpuClockOffset& clock);
Activity memset_activity(const CUpti_ActivityMemset4& record, const GpuClockOffset& clock);
Activity synchronization_activity(const CUpti_ActivitySynchronization2& record, int device,
                                  const GpuClockOffset& clock);
Activity overhead_activity(const CUpti_ActivityOverhead3& record, const GpuClockOffset& clock);
Activity api_activity(const CUpti_ActivityAPI& record, std::string name,
                      const GpuClockOffset& clock);

// Dispatches records of any kind, remembering context -> device from CONTEXT records
// (synchronization records name only their context).
class CuptiRecordConverter {
 public:
  using ApiNameLookup = std::function<std::string(CUpti_CallbackDomain, CUpti_CallbackId)>;

  CuptiRecordConverter(GpuClockOffset clock, ApiNameLookup api_name);

  // Appends the record's activity to `out` and returns true; false for records that
  // carry none (context records, kinds not traced, records CUPTI left without
  // timestamps), counted below.
  bool convert(const CUpti_Activity& record, std::vector<Activity>& out);

  const GpuClockOffset& clock() const { return clock_; }
  // The host range id of a CUDA correlation id, from the EXTERNAL_CORRELATION records
  // seen so far; 0 when none. Records of one call may come in different buffers, so
  // callers resolve once every buffer is in.
  uint64_t range_of(uint64_t correlation) const;
  // Forgets the correlation -> range pairs (after a trace has been collected).
  void clear_ranges() { range_of_correlation_.clear(); }
  // The event records (CUDA_EVENT) and stream waits (SYNCHRONIZATION, stream wait event)
  // seen since the last clear, for profiler::cuda_event_flows.
  const std::vector<CudaEventUse>& event_records() const { return event_records_; }
  const std::vector<CudaEventUse>& event_waits() const { return event_waits_; }
  void clear_events() {
    event_records_.clear();
    event_waits_.clear();
  }
  uint64_t ignored_records() const { return ignored_; }        // kinds we do not trace
  uint64_t incomplete_records() const { return incomplete_; }  // no valid start/end

 private:
  GpuClockOffset clock_;
  ApiNameLookup api_name_;
  std::map<uint32_t, int> device_of_context_;
  std::unordered_map<uint64_t, uint64_t> range_of_correlation_;
  std::vector<CudaEventUse> event_records_, event_waits_;
  std::map<std::pair<int, uint32_t>, std::string> api_names_;  // (domain, cbid) cache
  uint64_t ignored_ = 0;
  uint64_t incomplete_ = 0;
};

}  // namespace tunescope::profiler::cupti

#endif  // HAS_CUPTI
