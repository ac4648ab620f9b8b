// The host CPU's model name, as /proc/cpuinfo gives it: what machine signatures, the
// cpu backend's description, trace metadata and the machine-peak cache are keyed by.
#pragma once

#include <string>

namespace tunescope {

// The first non-empty "model name" of /proc/cpuinfo (x86 and most ARM kernels give
// one); "unknown CPU" without.
std::string host_cpu_model();

}  // namespace tunescope
