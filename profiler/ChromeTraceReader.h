// Reads a Chrome trace-event JSON file (plain or gzip) back into a Trace: the files
// ChromeTraceWriter and KinetoTraceWriter write, PyTorch profiler traces (Kineto object
// form and the legacy bare-list form of PyTorch 1.x), and foreign ones as far as their
// events carry our categories.
#pragma once

#include <filesystem>

#include "profiler/Trace.h"

namespace tunescope::profiler {

// Complete ("X") events whose cat is an activity kind (kernel, memcpy, memset, sync,
// overhead) become activities, those whose cat is a range category (run, candidate,
// iteration, layer, phase) become ranges. Kineto categories map too: gpu_memcpy,
// gpu_memset and cuda_sync to activities (device/stream from args, else pid/tid);
// cpu_op, user_annotation and gpu_user_annotation to ranges (ProfilerStep#N an
// iteration, operators a layer, other labels a phase; lanes numbered per thread).
// Legacy PyTorch events (no cat) in pid "CPU functions" become ranges, in "CUDA
// functions" kernels. Other events are skipped. Metadata comes from otherData; times
// are offset by otherData's origin or Kineto's baseTimeNanoseconds. Gzip is recognised
// by its magic bytes, not by the file name. The result is sorted by start time.
// Throws std::runtime_error naming the file and the problem: missing or unreadable
// file, not JSON, truncated, no traceEvents array, an event lacking a field.
Trace read_chrome_trace(const std::filesystem::path& path);

}  // namespace tunescope::profiler
