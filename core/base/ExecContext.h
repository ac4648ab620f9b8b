// Where and how a kernel runs: the thread pool of its lane, the tracer that records
// it (null when tracing is off), and the device and lane (stream) it belongs to.
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
};

}  // namespace tunescope
