// The "cpu" backend: the CPU op kernels plus a description of the machine and the
// numeric libraries it runs on. Registered by name; nobody includes this file.
#include <cblas.h>
#include <fftw3.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>

#include "core/base/Backend.h"
#include "core/base/Error.h"
#include "core/base/HostCpu.h"
#include "core/base/Registry.h"
#include "kernels/cpu/CpuOps.h"
#include "kernels/cpu/PeakProbe.h"

namespace tunescope::cpu {
namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }

  std::string device_description() const override {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    // openblas_get_config() rebuilds its answer in one static buffer (strcpy, then strcat
    // of " MAX_THREADS=..."), so two threads asking at once (in-process ranks) could read
    // "MAX_THREADS=64 MAX_THREADS=64" and take one machine for two. Asked once.
    static const std::string blas = trim(openblas_get_config());
    return cat(host_cpu_model(), ", ", cores, " logical cores, ", blas, ", ", fftwf_version);
  }

  OpKernels& ops() override { return ops_; }

  std::vector<profiler::MachinePeak> measure_peaks(int threads, double seconds) override {
    return measure_cpu_peaks(threads, seconds);
  }

 private:
  CpuOps ops_;
};

const BackendRegistration registration("cpu", "direct",
                                       [] { return std::make_unique<CpuBackend>(); });

}  // namespace
}  // namespace tunescope::cpu
