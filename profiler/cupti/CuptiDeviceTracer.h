// The CUPTI tracer as the Tracer's DeviceTracer (see profiler/DeviceTracer.h): started,
// stopped and collected with the host tracer, with each host range pushed as a CUPTI
// external correlation id so that kernels, copies and API calls made inside it carry
// its id (Activity::range_id). Registered for the "cuda" backend by
// kernels/cuda/CuptiTracerRegistration.cpp. Only with HAS_CUPTI.
#pragma once

#ifdef HAS_CUPTI

#include <atomic>
#include <memory>

#include "profiler/DeviceTracer.h"
#include "profiler/cupti/CuptiApi.h"
#include "profiler/cupti/CuptiTracer.h"

namespace tunescope::profiler::cupti {

class CuptiDeviceTracer final : public DeviceTracer {
 public:
  // `api`: the real CUPTI (make_cupti_api) or a test's fake.
  explicit CuptiDeviceTracer(std::shared_ptr<CuptiApi> api, CuptiTracerOptions options = {});

  std::string name() const override { return "cupti"; }
  bool start() override;
  void stop() override;
  bool push_range(uint64_t range_id) override;
  void pop_range() override;
  void collect_into(Trace& trace) override;
  uint64_t dropped_records() const override { return tracer_.dropped_records(); }
  std::vector<std::string> errors() const override { return tracer_.errors(); }

 private:
  std::shared_ptr<CuptiApi> api_;
  CuptiTracer tracer_;
  // Lane threads push ranges while the host thread starts and stops: ids are pushed only
  // while CUPTI collects (outside that window they would tag nothing we keep).
  std::atomic<bool> collecting_{false};
};

// A CuptiDeviceTracer on the real CUPTI, failures logged to stderr.
std::unique_ptr<DeviceTracer> make_cupti_device_tracer();

}  // namespace tunescope::profiler::cupti

#endif  // HAS_CUPTI
