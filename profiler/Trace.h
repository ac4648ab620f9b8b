// The trace model shared by every tracer, exporter, metric, the CLI and the GUI:
// plain records on one monotonic host clock in nanoseconds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tunescope::profiler {

enum class ActivityKind { kernel, memcpy, memset, sync, overhead };
enum class RangeCategory { run, candidate, iteration, layer, phase };

std::string to_string(ActivityKind kind);
std::string to_string(RangeCategory category);
// Both throw std::invalid_argument on an unknown name.
ActivityKind parse_activity_kind(const std::string& text);
RangeCategory parse_range_category(const std::string& text);

struct Activity {
  ActivityKind kind = ActivityKind::kernel;
  std::string name;
  int device = 0;
  int stream = 0;  // CPU: the lane; CUDA: the stream id
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation = 0;
  double flops = 0;
  double bytes = 0;
  // Device work: the id of the innermost host Range it was launched in (CUPTI external
  // correlation), 0 when unknown. Host activities leave it 0: they nest by time.
  uint64_t range_id = 0;

  int64_t duration_ns() const { return end_ns - start_ns; }
};

struct Range {
  std::string name;
  RangeCategory category = RangeCategory::run;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int device = 0;
  int lane = 0;
  // Unique within a trace (0: none, e.g. ranges read from foreign files); what
  // Activity::range_id refers to.
  uint64_t id = 0;
};

struct TraceMetadata {
  std::string machine;  // CPU model / GPU name and count
  std::string backend;  // "cpu", "cuda"
  std::string config;   // the RunConfig as JSON text (may be empty)
  std::map<std::string, std::string> extra;
};

struct Trace {
  TraceMetadata metadata;
  std::vector<Activity> activities;  // sorted by start_ns after collection
  std::vector<Range> ranges;         // sorted by start_ns after collection
};

// Sorts both lists by start time; at equal starts the enclosing (longer) record comes
// first, as nesting-aware consumers expect; full ties keep their order.
void sort_by_start(Trace& trace);

}  // namespace tunescope::profiler
