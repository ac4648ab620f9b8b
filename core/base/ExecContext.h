// Where and how a kernel runs: the thread pool of its lane, the tracer that records
// it (null when tracing is off), the device and lane it belongs to, and the lane's
// native stream (cudaStream_t on the CUDA backend, null on the CPU).
#pragma once

namespace tunescope {

// A lane's native stream: cudaStream_t on the cuda backend, null where kernels run on the
// lane's own thread (cpu). Opaque to everything but the backend that made it, and a type
// of its own so that no other pointer (a workspace, a tensor) passes for a stream.
class NativeStream {
 public:
  constexpr NativeStream() = default;
  template <class Handle>
  explicit NativeStream(Handle* handle) : handle_(handle) {}
  // The handle as the backend's own type, e.g. as<CUstream_st>() is a cudaStream_t.
  template <class Handle>
  Handle* as() const {
    return static_cast<Handle*>(handle_);
  }
  explicit operator bool() const { return handle_ != nullptr; }
  friend bool operator==(NativeStream, NativeStream) = default;

 private:
  void* handle_ = nullptr;
};

class ThreadPool;
namespace profiler {
class Tracer;
}

struct ExecContext {
  ThreadPool& pool;
  profiler::Tracer* tracer = nullptr;
  int device = 0;
  int lane = 0;
  NativeStream stream{};
};

}  // namespace tunescope
