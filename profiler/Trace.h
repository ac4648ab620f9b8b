// The trace model shared by every tracer, exporter, metric, the CLI and the GUI:
// plain records on one monotonic host clock in nanoseconds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "profiler/Name.h"

namespace tunescope::profiler {

// One byte each: a trace holds millions of records.
enum class ActivityKind : uint8_t { kernel, memcpy, memset, sync, overhead };
enum class RangeCategory : uint8_t { run, candidate, iteration, layer, phase };
// Why a flow's target waited for its source (see Flow).
enum class FlowKind {
  event,   // an executor event recorded on one lane and waited on by another (CUDA: event
           // record/wait)
  host,    // the host waited for a lane (host_wait, synchronize), then submitted to another lane
  launch,  // a host launch and the device work it launched (PyTorch's ac2g flows)
};

std::string to_string(ActivityKind kind);
std::string to_string(RangeCategory category);
// Both throw std::invalid_argument on an unknown name.
ActivityKind parse_activity_kind(const std::string& text);
RangeCategory parse_range_category(const std::string& text);
std::string to_string(FlowKind kind);
FlowKind parse_flow_kind(const std::string& text);

// Records are laid out widest first (72 and 48 bytes): a 10M-event trace holds them all.
struct Activity {
  Name name;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation = 0;
  double flops = 0;
  double bytes = 0;
  // Device work: the id of the innermost host Range it was launched in (CUPTI external
  // correlation), 0 when unknown. Host activities leave it 0: they nest by time.
  uint64_t range_id = 0;
  int device = 0;
  int stream = 0;  // CPU: the lane; CUDA: the stream id
  // The process (MPI rank) that recorded it: 0 in a single-process trace; a merged trace
  // of several ranks (merge_rank_traces) keeps each record's rank, and (rank, device,
  // stream) names a lane.
  int rank = 0;
  ActivityKind kind = ActivityKind::kernel;

  int64_t duration_ns() const { return end_ns - start_ns; }
};

struct Range {
  Name name;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  // Unique within a trace (0: none, e.g. ranges read from foreign files); what
  // Activity::range_id refers to.
  uint64_t id = 0;
  int device = 0;
  int lane = 0;
  int rank = 0;  // as Activity::rank
  RangeCategory category = RangeCategory::run;
};

// One end of a flow: a point in time on a lane (device and stream as in Activity).
struct FlowEnd {
  int device = 0;
  int stream = 0;
  int64_t ns = 0;
  int rank = 0;  // as Activity::rank
};

// A dependency between two lanes: the work on `to.stream` from `to.ns` on waited for the
// work on `from.stream` up to `from.ns`. The ends are points, not records, so that a
// flow survives formats that renumber records; a viewer draws an arrow from `from` to
// `to`. The source binds to the last activity of its lane ending at or before from.ns,
// the target to the first one starting at or after to.ns (analysis::DependencyGraph).
// Order on one lane and a launch's correlation with its kernel are implicit: flows
// hold only what those do not say.
struct Flow {
  FlowKind kind = FlowKind::event;
  FlowEnd from;
  FlowEnd to;
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
  std::vector<Flow> flows;           // sorted by to.ns after collection
};

// Sorts activities and ranges by start time; at equal starts the enclosing (longer)
// record comes first, as nesting-aware consumers expect; full ties keep their order.
// Flows go in the order of their targets, then sources.
void sort_by_start(Trace& trace);

// Whether any record belongs to a rank other than 0: a merged trace of several ranks,
// which writers lay out with one process per rank.
bool has_ranks(const Trace& trace);
// The distinct ranks of the trace's activities and ranges, ascending ({0} when empty).
std::vector<int> ranks_of(const Trace& trace);

}  // namespace tunescope::profiler
