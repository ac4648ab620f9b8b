// The backend name -> device tracer factory table (see DeviceTracer.h).
#include "profiler/DeviceTracer.h"

#include <map>
#include <mutex>

namespace tunescope::profiler {

namespace {

struct FactoryTable {
  std::mutex mutex;  // tests register and unregister fakes at run time
  std::map<std::string, DeviceTracerFactory> factories;
};

// A function-local static: registrations run during static initialisation of other
// translation units, in no defined order.
FactoryTable& table() {
  static FactoryTable instance;
  return instance;
}

}  // namespace

void register_device_tracer(const std::string& backend, DeviceTracerFactory factory) {
  FactoryTable& t = table();
  std::lock_guard lock(t.mutex);
  if (factory)
    t.factories[backend] = std::move(factory);
  else
    t.factories.erase(backend);
}

std::unique_ptr<DeviceTracer> make_device_tracer(const std::string& backend) {
  DeviceTracerFactory factory;
  {
    FactoryTable& t = table();
    std::lock_guard lock(t.mutex);
    const auto it = t.factories.find(backend);
    if (it == t.factories.end()) return nullptr;
    factory = it->second;
  }
  return factory();
}

}  // namespace tunescope::profiler
