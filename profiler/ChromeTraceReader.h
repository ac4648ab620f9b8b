// Reads a Chrome trace-event JSON file (plain or gzip) back into a Trace: the files
// ChromeTraceWriter writes, and foreign ones as far as their events carry our
// categories.
#pragma once

#include <filesystem>

#include "profiler/Trace.h"

namespace tunescope::profiler {

// Complete ("X") events whose cat is an activity kind (kernel, memcpy, memset, sync,
// overhead) become activities, those whose cat is a range category (run, candidate,
// iteration, layer, phase) become ranges; other events are skipped. Metadata comes
// from otherData. Gzip is recognised by its magic bytes, not by the file name. The
// result is sorted by start time.
// Throws std::runtime_error naming the file and the problem: missing or unreadable
// file, not JSON, truncated, no traceEvents array, an event lacking a field.
Trace read_chrome_trace(const std::filesystem::path& path);

}  // namespace tunescope::profiler
