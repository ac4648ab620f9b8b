// A device family (cpu, cuda): its op kernels and a description of the device.
// Convolution algorithms are registered per backend in the Registry.
#pragma once

#include <string>

#include "core/base/OpKernels.h"

namespace tunescope {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Human-readable device, e.g. "AMD EPYC 7B13, 2 cores, OpenBLAS 0.3.21, FFTW 3.3.10".
  virtual std::string device_description() const = 0;
  virtual OpKernels& ops() = 0;
};

}  // namespace tunescope
