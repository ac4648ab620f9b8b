// The CUPTI calls the tracer makes, as an interface: the real implementation
// (make_cupti_api) passes each call through one wrapper that logs the call text and
// CUPTI's error string on failure and returns the status, never aborting; tests inject
// a fake that serves hand-built activity buffers without a GPU. Only with HAS_CUPTI.
#pragma once

#ifdef HAS_CUPTI

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace tunescope::profiler::cupti {

// Where failed calls are reported: one line per failure.
using CuptiLog = std::function<void(const std::string& line)>;

class CuptiApi {
 public:
  virtual ~CuptiApi() = default;

  virtual CUptiResult enable(CUpti_ActivityKind kind) = 0;
  virtual CUptiResult disable(CUpti_ActivityKind kind) = 0;
  virtual CUptiResult register_callbacks(CUpti_BuffersCallbackRequestFunc requested,
                                         CUpti_BuffersCallbackCompleteFunc completed) = 0;
  // cuptiActivityGetNextRecord: *record null -> the first record; otherwise the one after
  // it. CUPTI_ERROR_MAX_LIMIT_REACHED at the end of the valid bytes.
  virtual CUptiResult next_record(uint8_t* buffer, size_t valid_bytes, CUpti_Activity** record) = 0;
  virtual CUptiResult dropped_records(CUcontext context, uint32_t stream, size_t* dropped) = 0;
  virtual CUptiResult flush_all(uint32_t flags) = 0;
  // cuptiActivityPushExternalCorrelationId / Pop with CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
  // for the calling thread: CUDA API calls made in between are preceded by an
  // EXTERNAL_CORRELATION record pairing their correlation id with `id`.
  virtual CUptiResult push_external_correlation(uint64_t id) = 0;
  virtual CUptiResult pop_external_correlation() = 0;
  // CUPTI's GPU-side clock, in ns, for the offset to the host clock.
  virtual CUptiResult timestamp(uint64_t* ns) = 0;
  // "cudaLaunchKernel_v7000" for a runtime API callback id; empty when unknown.
  virtual std::string callback_name(CUpti_CallbackDomain domain, CUpti_CallbackId id) = 0;
};

// CUPTI's text for a status ("CUPTI_ERROR_NOT_INITIALIZED"...), or the number.
std::string result_string(CUptiResult status);

// The one CUPTI call wrapper: on failure writes "CUPTI <call> failed: <error string>"
// to `log` and returns the status unchanged.
CUptiResult cupti_call(CUptiResult status, const char* call, const CuptiLog& log);

// The real CUPTI, logging failures to `log` (default: stderr with a "tunescope: " prefix).
std::unique_ptr<CuptiApi> make_cupti_api(CuptiLog log = {});

}  // namespace tunescope::profiler::cupti

#endif  // HAS_CUPTI
