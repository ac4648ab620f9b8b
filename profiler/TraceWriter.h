// The interface of every trace exporter (Chrome/Perfetto JSON, Nsight-like SQLite...):
// one Trace to one file. A new output format is a new TraceWriter.
#pragma once

#include <filesystem>

#include "profiler/Trace.h"

namespace tunescope::profiler {

class TraceWriter {
 public:
  virtual ~TraceWriter() = default;

  // Writes the whole trace to `path`, or leaves `path` untouched: a failed write never
  // leaves a half file that looks valid. Throws std::runtime_error naming the path
  // and the reason.
  virtual void write(const Trace& trace, const std::filesystem::path& path) const = 0;
};

}  // namespace tunescope::profiler
