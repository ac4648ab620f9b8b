// What the onednn:* algorithms share about the oneDNN library itself: its CPU engine,
// the thread count its primitives run with, and a description of the build for messages.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <string>

namespace tunescope::cpu::onednn {

// The one CPU engine every primitive is created on and executed with.
const dnnl::engine& cpu_engine();

// Sets the calling thread's OpenMP team size for oneDNN to 1 while alive, then restores
// it. Debian's oneDNN runs on OpenMP; our pool supplies the parallelism instead (each
// pool thread runs a primitive on its own part of the batch), so no OpenMP team is ever
// started beside our threads. A primitive must be created and run under the same
// count: oneDNN sizes its work split and scratchpad for the count it sees at creation.
class SingleThreadedScope {
 public:
  SingleThreadedScope();
  ~SingleThreadedScope();
  SingleThreadedScope(const SingleThreadedScope&) = delete;
  SingleThreadedScope& operator=(const SingleThreadedScope&) = delete;

 private:
  int previous_;
};

// "oneDNN 2.6.3 (OpenMP runtime, avx512_core)": the version, CPU runtime and the
// instruction set its kernels use here (DNNL_MAX_CPU_ISA may lower it).
std::string library_description();

}  // namespace tunescope::cpu::onednn
