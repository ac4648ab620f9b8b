// Where and how a kernel runs: the thread pool of its lane, the tracer that records
// it (null when tracing is off), the device and lane it belongs to, and the lane's
// native stream (cudaStream_t on the CUDA backend, null on the CPU).
#pragma once

namespace tunescope {

class ThreadPool;
namespace profiler {
class Tracer;
}

struct ExecContext {
  ThreadPool& pool;
  profiler::Tracer* tracer = nullptr;
  int device = 0;
  int lane = 0;
  void* stream = nullptr;
};

}  // namespace tunescope
