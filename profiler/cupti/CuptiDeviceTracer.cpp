// CUPTI behind the DeviceTracer interface (see CuptiDeviceTracer.h).
#ifdef HAS_CUPTI

#include "profiler/cupti/CuptiDeviceTracer.h"

#include <utility>

namespace tunescope::profiler::cupti {

CuptiDeviceTracer::CuptiDeviceTracer(std::shared_ptr<CuptiApi> api, CuptiTracerOptions options)
    : api_(std::move(api)), tracer_(*api_, std::move(options)) {}

bool CuptiDeviceTracer::start() {
  const bool started = tracer_.start();
  collecting_.store(started, std::memory_order_release);
  return started;
}

void CuptiDeviceTracer::stop() {
  collecting_.store(false, std::memory_order_release);
  tracer_.stop();
}

bool CuptiDeviceTracer::push_range(uint64_t range_id) {
  return collecting_.load(std::memory_order_acquire) && tracer_.push_range(range_id);
}

// Called only for pushed ids, so also after stop(): the thread's CUPTI stack stays balanced.
void CuptiDeviceTracer::pop_range() { tracer_.pop_range(); }

void CuptiDeviceTracer::collect_into(Trace& trace) { tracer_.collect_into(trace); }

std::unique_ptr<DeviceTracer> make_cupti_device_tracer() {
  return std::make_unique<CuptiDeviceTracer>(std::shared_ptr<CuptiApi>(make_cupti_api()));
}

}  // namespace tunescope::profiler::cupti

#endif  // HAS_CUPTI
