// Traces built by hand for the analysis tests: a CUDA-event dependency between lanes.
#pragma once

#include <cstdint>

#include "profiler/Trace.h"

namespace tunescope::profiler::analysis::test_support {

// A flow from `from_stream` at `from_ns` to `to_stream` at `to_ns` on device 0, as a
// recorded event and a wait on it make.
inline Flow event(int from_stream, int64_t from_ns, int to_stream, int64_t to_ns) {
  return Flow{FlowKind::event, {0, from_stream, from_ns}, {0, to_stream, to_ns}};
}

}  // namespace tunescope::profiler::analysis::test_support
