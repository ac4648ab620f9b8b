// Reads a Chrome trace-event JSON file (plain or gzip) back into a Trace: the files
// ChromeTraceWriter and KinetoTraceWriter write, PyTorch profiler traces (Kineto object
// form and the legacy bare-list form of PyTorch 1.x), and foreign ones as far as their
// events carry our categories.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>

#include "profiler/Trace.h"

namespace tunescope::profiler {

// What a read may cost and how it reports. The file is streamed: memory follows the
// records kept, never the size of the file.
struct TraceReadOptions {
  // Refuse a trace with more activities and ranges than this (0: no count limit).
  size_t max_records = 0;
  // Refuse a trace whose records would need more memory than this; 0: half of the
  // physical memory or of the address-space limit (ulimit -v), whichever is smaller.
  uint64_t max_memory_bytes = 0;
  // Polled while reading (at least every MiB of input): set it to stop the read, which
  // then throws TraceReadCancelled.
  const std::atomic<bool>* cancel = nullptr;
  // Called as input is consumed: bytes of the file read so far (compressed bytes for
  // gzip) and the file's size.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

// Thrown when TraceReadOptions::cancel was set; names the file.
class TraceReadCancelled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Complete ("X") events whose cat is an activity kind (kernel, memcpy, memset, sync,
// overhead) become activities, those whose cat is a range category (run, candidate,
// iteration, layer, phase) become ranges. Kineto categories map too: gpu_memcpy,
// gpu_memset and cuda_sync to activities (device/stream from args, else pid/tid);
// cpu_op, user_annotation and gpu_user_annotation to ranges (ProfilerStep#N an
// iteration, operators a layer, other labels a phase; lanes numbered per thread);
// cuda_runtime and cuda_driver calls to overhead activities on the host (device -1,
// their thread's lane) with their correlation. Flow events of category "dependency"
// (ours) become Trace::flows; Kineto's ac2g launch flows are implied by correlations.
// Legacy PyTorch events (no cat) in pid "CPU functions" become ranges, in "CUDA
// functions" kernels. A PyTorch trace without kernels (a CPU-only run) gets as
// activities the innermost operators doing most of their own work (a leaf op, or one
// whose self time is at least that of the ops it calls), on their thread's lane, and
// metadata.extra["activities"] saying so. Other events are skipped. Metadata comes
// from otherData; times are offset by otherData's origin or Kineto's
// baseTimeNanoseconds. A record's rank (Activity::rank...) comes from a numeric "rank"
// in its args (our merged traces), else 0. Gzip is recognised by its magic bytes, not by the file
// name. The result is sorted by start time. Throws std::runtime_error naming the file, the problem
// and where (byte offset or event index): missing or unreadable file, not JSON, truncated, no
// traceEvents array, an event lacking a field, more records or memory than the options allow.
Trace read_chrome_trace(const std::filesystem::path& path, const TraceReadOptions& options = {});

}  // namespace tunescope::profiler
