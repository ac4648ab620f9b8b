// The CUPTI tracer: collects GPU activity (concurrent kernels, memcpy, memset,
// synchronisation, CUPTI overhead, runtime and driver API calls with correlation ids)
// through the CUPTI Activity API and hands it over as profiler::Activity on the host
// clock. CUPTI owns nothing here but its calls: buffers are ours (requested/completed
// callbacks), conversion is CuptiRecordConverter, and the CUPTI calls go through the
// injected CuptiApi so tests run without a GPU. Only with HAS_CUPTI.
//
// CUPTI's buffer callbacks take no user pointer, so at most one CuptiTracer is started
// per process (CUPTI's activity state is process-wide anyway); start() refuses a second.
#pragma once

#ifdef HAS_CUPTI

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "profiler/Trace.h"
#include "profiler/cupti/CuptiActivityConverter.h"
#include "profiler/cupti/CuptiApi.h"

namespace tunescope::profiler::cupti {

struct CuptiTracerOptions {
  size_t buffer_bytes = size_t{8} << 20;  // per buffer handed to CUPTI
  // Runtime and driver API calls (launch overhead). CUPTI writes an EXTERNAL_CORRELATION
  // record before the API record of each call, so attributing device work to host
  // ranges relies on these being on.
  bool api_records = true;

  // The activity kinds start() enables, in order.
  std::vector<CUpti_ActivityKind> kinds() const;
};

class CuptiTracer {
 public:
  // `api` must outlive the tracer.
  explicit CuptiTracer(CuptiApi& api, CuptiTracerOptions options = {});
  ~CuptiTracer();
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;

  // Registers the buffer callbacks, enables the kinds and measures the GPU-to-host clock
  // offset. Returns false, with the reasons in errors(), when CUPTI refused (no device,
  // another tracer or profiler active); nothing stays enabled then.
  bool start();
  // Flushes every buffer (their records are converted) and disables the kinds.
  void stop();
  bool started() const { return started_; }

  // Tags the CUDA calls the calling thread makes until the matching pop with host range
  // `range_id` (CUPTI external correlation, kind CUSTOM0). False when CUPTI refused.
  bool push_range(uint64_t range_id);
  void pop_range();

  // Moves the activities collected so far into `trace` (sorted by start), each with the
  // range_id of its correlation id where an EXTERNAL_CORRELATION record named one, and
  // records the counts in trace.metadata.extra: cupti.records, cupti.dropped_records,
  // cupti.incomplete_records, cupti.ignored_records, cupti.attributed_records.
  void collect_into(Trace& trace);

  // Records CUPTI dropped because no buffer was free in time (a sign buffer_bytes is small).
  uint64_t dropped_records() const;
  uint64_t converted_records() const;
  std::vector<std::string> errors() const;
  std::optional<GpuClockOffset> clock_offset() const;

  // The buffer callbacks, reached through the C trampolines given to CUPTI. A completed
  // buffer is parsed here; the trampoline frees it.
  void on_buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t valid_bytes);

  size_t buffer_bytes() const { return options_.buffer_bytes; }

 private:
  void error(std::string message);

  CuptiApi& api_;
  CuptiTracerOptions options_;
  bool started_ = false;
  std::vector<CUpti_ActivityKind> enabled_;

  mutable std::mutex mutex_;  // CUPTI may complete buffers on its own thread
  std::optional<CuptiRecordConverter> converter_;
  std::vector<Activity> activities_;
  uint64_t dropped_ = 0;
  uint64_t converted_ = 0;
  std::vector<std::string> errors_;
};

}  // namespace tunescope::profiler::cupti

#endif  // HAS_CUPTI
