// The dependencies CUDA events make between streams, as trace flows: a stream that
// waited for an event (cudaStreamWaitEvent) ran its next work after the work the event
// captured on the recording stream (cudaEventRecord). CUPTI reports both calls with the
// correlation id of the API call (CUDA_EVENT and SYNCHRONIZATION records), and every
// kernel, copy and memset with the id of the call that launched it: ids grow in call
// order, so "before the record" and "after the wait" are comparisons of ids. Plain
// data, no CUPTI: the CUPTI tracer fills these from its records (profiler/cupti).
#pragma once

#include <cstdint>
#include <vector>

#include "profiler/Trace.h"

namespace tunescope::profiler {

// One cudaEventRecord or cudaStreamWaitEvent: the event, the stream it was recorded on
// or that waits, and the correlation id of the call.
struct CudaEventUse {
  uint64_t event = 0;
  int device = 0;
  int stream = 0;
  uint64_t correlation = 0;
};

// One event flow per wait whose event was recorded before it (the latest such record):
// from the end of the last device work launched on the recording stream before the
// record, to the start of the first device work launched on the waiting stream after
// the wait. A wait with no such record, no captured work (the event was complete at
// once) or no later work gives no flow.
std::vector<Flow> cuda_event_flows(const std::vector<Activity>& activities,
                                   const std::vector<CudaEventUse>& records,
                                   const std::vector<CudaEventUse>& waits);

}  // namespace tunescope::profiler
