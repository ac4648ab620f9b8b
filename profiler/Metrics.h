// Metrics of a Trace: pure functions shared by the CLI report and the GUI's selection
// statistics. Every function can restrict itself to a time window, clipping the
// activities that straddle it.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "profiler/RankMerge.h"
#include "profiler/Trace.h"

namespace tunescope::profiler {

constexpr size_t kActivityKindCount = 5;  // the values of ActivityKind

// A half-open time interval [start_ns, end_ns).
struct Interval {
  int64_t start_ns = 0;
  int64_t end_ns = 0;

  int64_t duration_ns() const { return end_ns - start_ns; }
  bool operator==(const Interval&) const = default;
};

// A set of activity kinds, e.g. to leave waits and launch overhead out of busy time.
class KindSet {
 public:
  constexpr KindSet() = default;
  constexpr KindSet(std::initializer_list<ActivityKind> kinds) {
    for (ActivityKind kind : kinds) bits_ |= bit(kind);
  }
  static constexpr KindSet all() {
    return {ActivityKind::kernel, ActivityKind::memcpy, ActivityKind::memset, ActivityKind::sync,
            ActivityKind::overhead};
  }
  // What occupies a lane with work: waits (sync) and launch overhead are left out.
  static constexpr KindSet work() {
    return {ActivityKind::kernel, ActivityKind::memcpy, ActivityKind::memset};
  }
  constexpr bool contains(ActivityKind kind) const { return (bits_ & bit(kind)) != 0; }

 private:
  static constexpr uint8_t bit(ActivityKind kind) {
    return static_cast<uint8_t>(1u << static_cast<unsigned>(kind));
  }
  uint8_t bits_ = 0;
};

// Which activities a metric looks at, and over what time.
struct MetricsScope {
  std::optional<Interval> window;  // clip to [start, end); the whole trace when unset
  KindSet kinds = KindSet::work();
};

// A (device, stream) pair of a rank: one row of the timeline. Ordered by rank, then
// device, then lane (rank comes last in the aggregate so that {device, lane} keeps
// meaning rank 0's lane).
struct LaneKey {
  int device = 0;
  int lane = 0;
  int rank = 0;
  bool operator==(const LaneKey&) const = default;
  std::strong_ordering operator<=>(const LaneKey& other) const {
    if (const auto c = rank <=> other.rank; c != 0) return c;
    if (const auto c = device <=> other.device; c != 0) return c;
    return lane <=> other.lane;
  }
};

// The time metrics are measured over: the window when given, else first start .. last
// end over all activities of the trace (any kind). Empty trace: {0, 0}.
Interval measured_span(const Trace& trace, const std::optional<Interval>& window = std::nullopt);

// The union of `intervals` as sorted, disjoint intervals; touching intervals merge and
// empty ones vanish.
std::vector<Interval> merge_intervals(const std::vector<Interval>& intervals);

// merge_intervals built one interval at a time: while they come in start order (a
// lane's or a rank's activities of a sorted trace) it keeps only the union, so a
// metric over millions of activities needs no copy of them; out of order ones are kept
// aside and merged in by take().
class IntervalUnion {
 public:
  void add(Interval interval);
  // The union so far (sorted, disjoint); leaves this empty.
  std::vector<Interval> take();

 private:
  std::vector<Interval> merged_;
  std::vector<Interval> unordered_;
};

struct KernelStats {
  std::string name;
  ActivityKind kind = ActivityKind::kernel;
  size_t calls = 0;
  int64_t total_ns = 0;
  double mean_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double share_pct = 0;  // of the summed time of every row, before top_n truncation
};

// One row per (kind, name) of the scope's kinds, sorted by total time descending (then
// by name). An activity straddling the window counts as a call with its clipped time.
// top_n > 0 keeps only the first top_n rows.
std::vector<KernelStats> kernel_table(const Trace& trace, const MetricsScope& scope = {},
                                      size_t top_n = 0);

struct LaneStats {
  LaneKey lane;
  size_t activities = 0;
  int64_t busy_ns = 0;     // union of the lane's activity intervals
  Interval span;           // first start .. last end on this lane (clipped)
  double utilisation = 0;  // busy_ns / measured_span duration, in [0, 1]
};

// One row per lane that has activities in scope, sorted by (device, lane).
std::vector<LaneStats> lane_stats(const Trace& trace, const MetricsScope& scope = {});

struct Concurrency {
  int64_t busy_ns = 0;          // union over all lanes: time with >= 1 activity in flight
  int64_t concurrent_ns = 0;    // time with >= 2 activities in flight
  double concurrent_share = 0;  // concurrent_ns / busy_ns, in [0, 1]
  double mean_in_flight = 0;    // time-weighted mean of activities in flight over busy time
  int max_in_flight = 0;
};

// Across all lanes: how much of the busy time overlaps.
Concurrency concurrency(const Trace& trace, const MetricsScope& scope = {});

struct LaneGaps {
  LaneKey lane;
  size_t count = 0;  // idle stretches between busy stretches of the lane
  int64_t total_ns = 0;
  int64_t largest_ns = 0;
  std::vector<Interval> long_gaps;  // those longer than the threshold, in time order
};

// Idle time on each lane between its first and last activity in scope (time before a
// lane's first or after its last activity is not a gap). Same rows as lane_stats().
std::vector<LaneGaps> idle_gaps(const Trace& trace, int64_t threshold_ns,
                                const MetricsScope& scope = {});

struct RangeDeviceTime {
  std::string name;   // of the range; kOutsideRanges for work outside any of the category
  size_t ranges = 0;  // range instances that launched work in scope
  size_t activities = 0;
  int64_t device_ns = 0;  // summed (not merged) clipped time
  double share_pct = 0;   // of all attributed device time in scope
};

// The row name for attributed work launched outside every range of the category (e.g.
// the update phase's kernels, for layers of the forward and backward phases).
inline constexpr const char* kOutsideRanges = "(outside)";

// Device time attributed to host ranges of `category` (layer: device time per layer):
// each activity in scope whose range_id names a range is counted for that range when it
// is of `category`, else for the innermost range of `category` enclosing it (same
// device and lane, within its time). Activities without range_id (host activities, or
// device work launched outside any traced range) are left out. One row per range name,
// sorted by device time descending, then name.
std::vector<RangeDeviceTime> device_time_by_range(const Trace& trace, RangeCategory category,
                                                  const MetricsScope& scope = {});

// The part of [start, end) inside the window (all of it without one), or nothing; a
// zero-length record is inside when its instant is.
std::optional<Interval> clip_interval(int64_t start, int64_t end,
                                      const std::optional<Interval>& window);

// Communication between ranks, by name: the all-reduce buckets of our MPI runs
// ("allreduce.bucket3"), NCCL kernels and calls (the name contains "nccl", any case) and
// MPI calls ("MPI_Allreduce", "mpi.wait"...).
bool is_communication(const std::string& name);

// One rank of a trace (a merged trace has several; a single process is rank 0). Times
// are unions over the rank's lanes of its activities in scope.
struct RankStats {
  int rank = 0;
  size_t activities = 0;
  int64_t busy_ns = 0;                  // any work
  int64_t compute_ns = 0;               // work that is not communication
  int64_t communication_ns = 0;         // communication (is_communication)
  int64_t hidden_communication_ns = 0;  // communication while the rank computed
  double hidden_share = 0;              // hidden / communication, in [0, 1]; 0 without any
};

struct RankBalance {
  std::vector<RankStats> ranks;  // by rank
  // The straggler: the rank with the most compute time (the others wait for it in the
  // all-reduce), against the rank with the least; excess in ns and % of the fastest's.
  int straggler = 0;
  int fastest = 0;
  int64_t straggler_excess_ns = 0;
  double straggler_excess_pct = 0;
  // Over all ranks.
  int64_t communication_ns = 0;
  int64_t hidden_communication_ns = 0;
  double hidden_share = 0;
};

// Per-rank busy time, the straggler and the share of communication hidden behind
// compute on the same rank. A rank appears when it has an activity in scope.
RankBalance rank_balance(const Trace& trace, const MetricsScope& scope = {});

struct SummaryOptions {
  MetricsScope scope;
  size_t top_n = 0;              // rows of the kernel table; 0 keeps all
  int64_t gap_threshold_ns = 0;  // gaps longer than this are listed
};

struct TraceSummary {
  Interval span;          // measured_span()
  size_t activities = 0;  // in the window, any kind
  size_t ranges = 0;      // in the window
  // Summed (not merged) clipped time per kind, indexed by ActivityKind, whatever the
  // scope's kinds: shows sync waits and launch overhead next to the work.
  std::array<int64_t, kActivityKindCount> time_by_kind_ns{};
  size_t kernel_rows = 0;  // rows of the kernel table before top_n
  std::vector<KernelStats> kernels;
  std::vector<LaneStats> lanes;
  Concurrency concurrency;
  std::vector<LaneGaps> gaps;
  // Device time by layer (device_time_by_range), when device work carries range ids.
  std::vector<RangeDeviceTime> device_time_by_layer;
  // Ranks and communication (rank_balance), and a merged trace's clock alignment.
  RankBalance ranks;
  std::vector<RankClock> rank_clocks;
  // From the trace metadata: the device tracer's name, why it did not start, and the
  // records it dropped (empty when the trace has no device tracer).
  std::string device_tracer;
  std::string device_tracer_error;
  std::string dropped_records;
};

TraceSummary summarize(const Trace& trace, const SummaryOptions& options = {});

}  // namespace tunescope::profiler
