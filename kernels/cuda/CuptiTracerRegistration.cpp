// Registers the CUPTI device tracer for the "cuda" backend, so that every session on
// cuda (train, profile, tune) records device activity with its host ranges (see
// profiler/DeviceTracer.h for why a registry next to the backend rather than a Backend
// virtual). A file of its own in the backend's object library: static registration
// objects in the profiler's static library would be dropped by the linker.
#include "profiler/DeviceTracer.h"
#include "profiler/cupti/CuptiDeviceTracer.h"

namespace tunescope::cuda {
namespace {

const profiler::DeviceTracerRegistration cupti_registration(
    "cuda", profiler::cupti::make_cupti_device_tracer);

}  // namespace
}  // namespace tunescope::cuda
