// NVTX 3 ranges for the tracer's ranges, so that a run under `nsys profile` (or any
// NVTX tool) is labelled with the same run/iteration/phase/layer names as our own trace.
// All ranges go to the domain "tunescope"; the NVTX category is 1 + the RangeCategory,
// named after it. Built from the header-only NVTX 3 of the CUDA toolkit when CMake finds
// it (TUNESCOPE_HAVE_NVTX), and empty otherwise; without a tool attached (no
// NVTX_INJECTION64_PATH) each call is a null function-pointer check.
#pragma once

#include "profiler/Trace.h"

namespace tunescope::profiler::nvtx {

// Push/pop ranges: a pop closes the innermost range pushed on the calling thread.
void push_range(const char* name, RangeCategory category);
void pop_range();

}  // namespace tunescope::profiler::nvtx
