// A tracer of device activity (CUPTI on the cuda backend) that runs alongside the host
// Tracer: the Tracer starts, stops and collects it with itself, and tells it about every
// host range it opens, so that device work launched inside a range can be attributed to
// it (Activity::range_id = Range::id).
//
// How a session gets one: backends register a factory here under the backend's name,
// from the backend's own object library (kernels/cuda/CuptiTracerRegistration.cpp), and
// the session asks make_device_tracer(backend.name()). A registry rather than a Backend
// virtual keeps the Backend interface (core/base) free of profiler types, needs nothing
// from backends without device tracing (cpu), and lets tests register a fake.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "profiler/Trace.h"

namespace tunescope::profiler {

class DeviceTracer {
 public:
  virtual ~DeviceTracer() = default;

  // "cupti": recorded in the trace metadata (device_tracer).
  virtual std::string name() const = 0;

  // Starts collecting. False when the device's tracing facility refuses (no device,
  // another profiler holds it); the reason is in errors(). Host tracing goes on without.
  virtual bool start() = 0;
  // Flushes what the device still holds and stops collecting.
  virtual void stop() = 0;

  // Called by the thread that opens / closes a host range while recording: device work
  // that thread launches in between carries `range_id`. Returns whether the id was
  // pushed; pop_range is called exactly for pushed ids, innermost first, on the same
  // thread.
  virtual bool push_range(uint64_t range_id) = 0;
  virtual void pop_range() = 0;

  // Moves the activities collected so far into `trace` (on the host clock, range_id
  // set where known) and adds its counts to trace.metadata.extra, among them
  // "<name>.dropped_records".
  virtual void collect_into(Trace& trace) = 0;

  virtual uint64_t dropped_records() const = 0;
  virtual std::vector<std::string> errors() const = 0;
};

using DeviceTracerFactory = std::function<std::unique_ptr<DeviceTracer>()>;

// Registers `factory` for backend `backend` (static initialisation time, like backends);
// an empty factory removes the registration.
void register_device_tracer(const std::string& backend, DeviceTracerFactory factory);
// A new device tracer for `backend`, or null when none is registered.
std::unique_ptr<DeviceTracer> make_device_tracer(const std::string& backend);

struct DeviceTracerRegistration {
  DeviceTracerRegistration(const std::string& backend, DeviceTracerFactory factory) {
    register_device_tracer(backend, std::move(factory));
  }
};

// Trace metadata keys the Tracer writes about its device tracer.
inline constexpr const char* kDeviceTracerKey = "device_tracer";             // its name()
inline constexpr const char* kDeviceTracerErrorKey = "device_tracer.error";  // why start() failed
inline constexpr const char* kDroppedRecordsKey = "device_tracer.dropped_records";

}  // namespace tunescope::profiler
