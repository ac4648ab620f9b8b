// CUPTI activity collection into Activities (see CuptiTracer.h).
#ifdef HAS_CUPTI

#include "profiler/cupti/CuptiTracer.h"

#include <atomic>
#include <cstdlib>
#include <utility>

#include "profiler/Clock.h"

namespace tunescope::profiler::cupti {

namespace {

// CUPTI requires activity buffers aligned to 8 bytes.
constexpr size_t kBufferAlignment = 8;

// The started tracer, for the C callbacks (which carry no user pointer).
std::atomic<CuptiTracer*> g_active{nullptr};

// Also used while no tracer is started (a late flush): then the buffer is only freed.
std::atomic<size_t> g_buffer_bytes{size_t{8} << 20};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  const size_t bytes = g_buffer_bytes.load();
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, bytes));
  // A null buffer makes CUPTI drop records, which the dropped count then reports.
  *size = *buffer ? bytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t /*size*/,
                               size_t valid_bytes) {
  if (CuptiTracer* tracer = g_active.load())
    tracer->on_buffer_completed(context, stream, buffer, valid_bytes);
  std::free(buffer);
}

}  // namespace

std::vector<CUpti_ActivityKind> CuptiTracerOptions::kinds() const {
  // CONTEXT first: synchronisation records name only their context. EXTERNAL_CORRELATION
  // pairs CUDA calls with the host range they were made in.
  std::vector<CUpti_ActivityKind> kinds{
      CUPTI_ACTIVITY_KIND_CONTEXT,         CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
      CUPTI_ACTIVITY_KIND_MEMCPY,          CUPTI_ACTIVITY_KIND_MEMSET,
      CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_CUDA_EVENT,
      CUPTI_ACTIVITY_KIND_OVERHEAD,        CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
  if (api_records) {
    kinds.push_back(CUPTI_ACTIVITY_KIND_RUNTIME);
    kinds.push_back(CUPTI_ACTIVITY_KIND_DRIVER);
  }
  return kinds;
}

CuptiTracer::CuptiTracer(CuptiApi& api, CuptiTracerOptions options)
    : api_(api), options_(std::move(options)) {}

CuptiTracer::~CuptiTracer() {
  if (started_) stop();
}

void CuptiTracer::error(std::string message) {
  std::lock_guard lock(mutex_);
  errors_.push_back(std::move(message));
}

bool CuptiTracer::start() {
  if (started_) return true;
  CuptiTracer* expected = nullptr;
  if (!g_active.compare_exchange_strong(expected, this)) {
    error("another CUPTI tracer is already started in this process");
    return false;
  }
  g_buffer_bytes.store(options_.buffer_bytes);

  // The offset first: records converted later must all use the same one.
  const int64_t host_before = now_ns();
  uint64_t gpu_ns = 0;
  const CUptiResult clock_status = api_.timestamp(&gpu_ns);
  const int64_t host_after = now_ns();
  if (clock_status != CUPTI_SUCCESS) {
    error("cuptiGetTimestamp failed: " + result_string(clock_status));
    g_active.store(nullptr);
    return false;
  }
  {
    std::lock_guard lock(mutex_);
    converter_.emplace(clock_offset_from_samples(host_before, gpu_ns, host_after),
                       [this](CUpti_CallbackDomain domain, CUpti_CallbackId id) {
                         return api_.callback_name(domain, id);
                       });
  }

  if (const CUptiResult status = api_.register_callbacks(buffer_requested, buffer_completed);
      status != CUPTI_SUCCESS) {
    error("cuptiActivityRegisterCallbacks failed: " + result_string(status));
    g_active.store(nullptr);
    return false;
  }
  for (CUpti_ActivityKind kind : options_.kinds()) {
    const CUptiResult status = api_.enable(kind);
    if (status != CUPTI_SUCCESS) {
      error("cuptiActivityEnable(" + std::to_string(static_cast<int>(kind)) +
            ") failed: " + result_string(status));
      for (CUpti_ActivityKind done : enabled_) api_.disable(done);
      enabled_.clear();
      g_active.store(nullptr);
      return false;
    }
    enabled_.push_back(kind);
  }
  started_ = true;
  return true;
}

void CuptiTracer::stop() {
  if (!started_) return;
  // Forced: also the buffers that are not full yet. The completed callbacks run before
  // cuptiActivityFlushAll returns.
  if (const CUptiResult status = api_.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      status != CUPTI_SUCCESS)
    error("cuptiActivityFlushAll failed: " + result_string(status));
  for (CUpti_ActivityKind kind : enabled_) api_.disable(kind);
  enabled_.clear();
  started_ = false;
  g_active.store(nullptr);
}

void CuptiTracer::on_buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer,
                                      size_t valid_bytes) {
  std::vector<Activity> converted;
  std::lock_guard lock(mutex_);
  if (!converter_) return;
  if (valid_bytes > 0) {
    CUpti_Activity* record = nullptr;
    CUptiResult status;
    while ((status = api_.next_record(buffer, valid_bytes, &record)) == CUPTI_SUCCESS)
      if (converter_->convert(*record, converted)) ++converted_;
    if (status != CUPTI_ERROR_MAX_LIMIT_REACHED)
      errors_.push_back("cuptiActivityGetNextRecord failed: " + result_string(status));
  }
  size_t dropped = 0;
  if (api_.dropped_records(context, stream, &dropped) == CUPTI_SUCCESS) dropped_ += dropped;
  activities_.insert(activities_.end(), std::make_move_iterator(converted.begin()),
                     std::make_move_iterator(converted.end()));
}

bool CuptiTracer::push_range(uint64_t range_id) {
  return api_.push_external_correlation(range_id) == CUPTI_SUCCESS;
}

void CuptiTracer::pop_range() { api_.pop_external_correlation(); }

void CuptiTracer::collect_into(Trace& trace) {
  std::lock_guard lock(mutex_);
  uint64_t attributed = 0;
  for (Activity& a : activities_) {
    if (a.correlation == 0 || !converter_) continue;
    a.range_id = converter_->range_of(a.correlation);
    if (a.range_id != 0) ++attributed;
  }
  if (converter_) {
    converter_->clear_ranges();
    // Streams that waited for another's event: flows, as the executor records its own.
    const std::vector<Flow> events =
        cuda_event_flows(activities_, converter_->event_records(), converter_->event_waits());
    trace.flows.insert(trace.flows.end(), events.begin(), events.end());
    trace.metadata.extra["cupti.event_flows"] = std::to_string(events.size());
    converter_->clear_events();
  }
  trace.activities.insert(trace.activities.end(), std::make_move_iterator(activities_.begin()),
                          std::make_move_iterator(activities_.end()));
  activities_.clear();
  trace.metadata.extra["cupti.attributed_records"] = std::to_string(attributed);
  trace.metadata.extra["cupti.records"] = std::to_string(converted_);
  trace.metadata.extra["cupti.dropped_records"] = std::to_string(dropped_);
  trace.metadata.extra["cupti.incomplete_records"] =
      std::to_string(converter_ ? converter_->incomplete_records() : 0);
  trace.metadata.extra["cupti.ignored_records"] =
      std::to_string(converter_ ? converter_->ignored_records() : 0);
  sort_by_start(trace);
}

uint64_t CuptiTracer::dropped_records() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

uint64_t CuptiTracer::converted_records() const {
  std::lock_guard lock(mutex_);
  return converted_;
}

std::vector<std::string> CuptiTracer::errors() const {
  std::lock_guard lock(mutex_);
  return errors_;
}

std::optional<GpuClockOffset> CuptiTracer::clock_offset() const {
  std::lock_guard lock(mutex_);
  if (!converter_) return std::nullopt;
  return converter_->clock();
}

}  // namespace tunescope::profiler::cupti

#endif  // HAS_CUPTI
