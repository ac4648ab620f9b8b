// Small synthetic traces for the GUI tests, written to disk with the profiler's own
// ChromeTraceWriter so the tests go through the same reader the GUI uses.
#pragma once

#include <QString>
#include <QTemporaryDir>
#include <string>

#include "profiler/ChromeTraceWriter.h"
#include "profiler/Trace.h"

namespace tunescope::gui::test_support {

inline profiler::Activity kernel(std::string name, int device, int stream, int64_t start,
                                 int64_t end, double flops = 0, double bytes = 0) {
  profiler::Activity a;
  a.name = std::move(name);
  a.device = device;
  a.stream = stream;
  a.start_ns = start;
  a.end_ns = end;
  a.flops = flops;
  a.bytes = bytes;
  return a;
}

inline profiler::Range range(std::string name, profiler::RangeCategory category, int64_t start,
                             int64_t end, int device = 0) {
  profiler::Range r;
  r.name = std::move(name);
  r.category = category;
  r.start_ns = start;
  r.end_ns = end;
  r.device = device;
  return r;
}

// Two devices; device 0 has streams 0 and 1 that overlap, device 1 one stream.
// Kernels: direct.fwd x3 (1000 ns each), bn.fwd x2 (9 ns), gemm.bwd_data x1 (10 ns),
// sgd x2 (on device 1); ranges nest run > iteration x2 > layer.
inline profiler::Trace smallTrace() {
  using profiler::RangeCategory;
  profiler::Trace t;
  t.metadata.backend = "cpu";
  t.metadata.machine = "test machine";
  const int64_t o = 1'000'000;  // a non-zero origin, as real clocks have
  t.activities = {
      kernel("direct.fwd", 0, 0, o + 0, o + 1000, 2e6, 4e3),
      kernel("bn.fwd", 0, 0, o + 1100, o + 1109),
      kernel("direct.fwd", 0, 1, o + 500, o + 1500),
      kernel("gemm.bwd_data", 0, 1, o + 1600, o + 1610),
      kernel("direct.fwd", 0, 0, o + 2000, o + 3000),
      kernel("bn.fwd", 0, 0, o + 3100, o + 3109),
      kernel("sgd", 1, 0, o + 3200, o + 3300),
      kernel("sgd", 1, 0, o + 3400, o + 3500),
  };
  t.ranges = {
      range("run", RangeCategory::run, o + 0, o + 3600),
      range("step 0", RangeCategory::iteration, o + 0, o + 1800),
      range("conv1", RangeCategory::layer, o + 0, o + 1000),
      range("step 1", RangeCategory::iteration, o + 1800, o + 3600),
  };
  profiler::sort_by_start(t);
  return t;
}

// `events` kernels of 500 ns, round-robin over `lanes` lanes of device 0 and one range
// per lane: about 160 bytes of JSON per event, so 300 000 events take a while to read
// (cancellation tests) and 40 lanes overflow any window (scrolling tests).
inline profiler::Trace manyEventsTrace(size_t events, int lanes) {
  profiler::Trace t;
  t.metadata.backend = "cpu";
  const char* names[] = {"direct.fwd", "gemm.bwd_data", "bn.fwd", "sgd"};
  for (size_t i = 0; i < events; ++i) {
    const int lane = static_cast<int>(i % static_cast<size_t>(lanes));
    const auto start = static_cast<int64_t>(i / static_cast<size_t>(lanes)) * 1000;
    t.activities.push_back(kernel(names[i % 4], 0, lane, start, start + 500));
  }
  const int64_t end = static_cast<int64_t>(events / static_cast<size_t>(lanes) + 1) * 1000;
  for (int lane = 0; lane < lanes; ++lane) {
    profiler::Range r = range("run", profiler::RangeCategory::run, 0, end);
    r.lane = lane;
    t.ranges.push_back(r);
  }
  profiler::sort_by_start(t);
  return t;
}

inline QString writeTrace(const QTemporaryDir& dir, const profiler::Trace& trace,
                          const QString& name = QStringLiteral("small.json")) {
  const QString path = dir.filePath(name);
  profiler::ChromeTraceWriter().write(trace, path.toStdString());
  return path;
}

}  // namespace tunescope::gui::test_support
