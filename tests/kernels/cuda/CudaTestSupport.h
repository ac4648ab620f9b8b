// Shared by the CUDA tests: skip, with the driver's reason, when no device can be used.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kernels/cuda/CudaDevice.h"

#define TS_SKIP_WITHOUT_CUDA_DEVICE()                                                             \
  do {                                                                                            \
    if (const std::string reason = ::tunescope::cuda::cuda_unavailable_reason(); !reason.empty()) \
      GTEST_SKIP() << reason;                                                                     \
  } while (false)

namespace tunescope::cuda {

// Whether an error message holds `part`.
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace tunescope::cuda
