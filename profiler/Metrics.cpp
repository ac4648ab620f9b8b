// Metrics of a Trace: kernel table, lane busy time, concurrency and idle gaps, all
// built on one sweep over interval start/end events.
#include "profiler/Metrics.h"

#include <algorithm>
#include <limits>
#include <map>
#include <queue>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "profiler/DeviceTracer.h"

namespace tunescope::profiler {

static_assert(static_cast<size_t>(ActivityKind::overhead) + 1 == kActivityKindCount,
              "kActivityKindCount must follow ActivityKind");

namespace {

// The part of [start, end) inside the window, or nothing. A zero-length record is
// inside when its instant is, so that it still counts as a call. A negative duration
// (a corrupt record) is treated as zero rather than subtracting time.
std::optional<Interval> clip(int64_t start, int64_t end, const std::optional<Interval>& window) {
  end = std::max(end, start);
  if (!window) return Interval{start, end};
  if (start == end) {
    if (start >= window->start_ns && start < window->end_ns) return Interval{start, end};
    return std::nullopt;
  }
  const int64_t s = std::max(start, window->start_ns);
  const int64_t e = std::min(end, window->end_ns);
  if (s >= e) return std::nullopt;
  return Interval{s, e};
}

// Calls visit(activity, clipped interval) for every activity of the scope.
template <typename Visit>
void for_each_in_scope(const Trace& trace, const MetricsScope& scope, Visit visit) {
  for (const Activity& a : trace.activities) {
    if (!scope.kinds.contains(a.kind)) continue;
    if (auto part = clip(a.start_ns, a.end_ns, scope.window)) visit(a, *part);
  }
}

// The one sweep line behind busy time, concurrency and gaps: calls
// visit(piece, in_flight) for each maximal piece of time, in order, during which a
// constant non-zero number of intervals is in flight. Ends and starts at the same
// instant are applied together, so back-to-back intervals never count as overlapping.
template <typename Visit>
void sweep(const std::vector<Interval>& intervals, Visit visit) {
  std::vector<std::pair<int64_t, int>> events;
  events.reserve(2 * intervals.size());
  for (const Interval& i : intervals) {
    if (i.end_ns <= i.start_ns) continue;
    events.emplace_back(i.start_ns, +1);
    events.emplace_back(i.end_ns, -1);
  }
  std::sort(events.begin(), events.end());
  int in_flight = 0;
  for (size_t k = 0; k < events.size();) {
    const int64_t now = events[k].first;
    for (; k < events.size() && events[k].first == now; ++k) in_flight += events[k].second;
    // Every interval ends after it starts, so in_flight is 0 after the last instant.
    if (in_flight > 0 && k < events.size()) visit(Interval{now, events[k].first}, in_flight);
  }
}

}  // namespace

std::optional<Interval> clip_interval(int64_t start, int64_t end,
                                      const std::optional<Interval>& window) {
  return clip(start, end, window);
}

namespace {

struct LaneData {
  size_t activities = 0;
  Interval span{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  IntervalUnion union_;
  std::vector<Interval> busy;  // merged: sorted and disjoint
};

std::map<LaneKey, LaneData> lanes_of(const Trace& trace, const MetricsScope& scope) {
  std::map<LaneKey, LaneData> lanes;
  // Consecutive activities mostly share a lane: remember the last one's.
  LaneData* last = nullptr;
  LaneKey last_key;
  for_each_in_scope(trace, scope, [&](const Activity& a, const Interval& part) {
    const LaneKey key{a.device, a.stream, a.rank};
    if (!last || !(key == last_key)) last = &lanes[key], last_key = key;
    LaneData& lane = *last;
    ++lane.activities;
    lane.span.start_ns = std::min(lane.span.start_ns, part.start_ns);
    lane.span.end_ns = std::max(lane.span.end_ns, part.end_ns);
    lane.union_.add(part);
  });
  for (auto& [key, lane] : lanes) lane.busy = lane.union_.take();
  return lanes;
}

int64_t total_duration(const std::vector<Interval>& intervals) {
  int64_t total = 0;
  for (const Interval& i : intervals) total += i.duration_ns();
  return total;
}

std::vector<LaneStats> lane_stats_of(const std::map<LaneKey, LaneData>& lanes, Interval span) {
  std::vector<LaneStats> rows;
  rows.reserve(lanes.size());
  for (const auto& [key, lane] : lanes) {
    LaneStats row;
    row.lane = key;
    row.activities = lane.activities;
    row.busy_ns = total_duration(lane.busy);
    row.span = lane.span;
    row.utilisation = span.duration_ns() > 0 ? static_cast<double>(row.busy_ns) /
                                                   static_cast<double>(span.duration_ns())
                                             : 0.0;
    rows.push_back(row);
  }
  return rows;
}

std::vector<LaneGaps> idle_gaps_of(const std::map<LaneKey, LaneData>& lanes, int64_t threshold_ns) {
  std::vector<LaneGaps> rows;
  rows.reserve(lanes.size());
  for (const auto& [key, lane] : lanes) {
    LaneGaps row;
    row.lane = key;
    for (size_t i = 1; i < lane.busy.size(); ++i) {
      const Interval gap{lane.busy[i - 1].end_ns, lane.busy[i].start_ns};
      ++row.count;
      row.total_ns += gap.duration_ns();
      row.largest_ns = std::max(row.largest_ns, gap.duration_ns());
      if (gap.duration_ns() > threshold_ns) row.long_gaps.push_back(gap);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

Interval measured_span(const Trace& trace, const std::optional<Interval>& window) {
  if (window) return *window;
  if (trace.activities.empty()) return {};
  Interval span{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  for (const Activity& a : trace.activities) {
    span.start_ns = std::min(span.start_ns, a.start_ns);
    span.end_ns = std::max(span.end_ns, std::max(a.end_ns, a.start_ns));
  }
  return span;
}

std::vector<Interval> merge_intervals(const std::vector<Interval>& intervals) {
  std::vector<Interval> merged;
  sweep(intervals, [&](const Interval& piece, int) {
    if (!merged.empty() && merged.back().end_ns == piece.start_ns)
      merged.back().end_ns = piece.end_ns;
    else
      merged.push_back(piece);
  });
  return merged;
}

void IntervalUnion::add(Interval interval) {
  if (interval.end_ns <= interval.start_ns) return;
  // Past the last piece's end means past every start so far: still in order.
  if (merged_.empty() || interval.start_ns > merged_.back().end_ns) {
    merged_.push_back(interval);
  } else if (interval.start_ns >= merged_.back().start_ns) {
    merged_.back().end_ns = std::max(merged_.back().end_ns, interval.end_ns);
  } else {
    unordered_.push_back(interval);
  }
}

std::vector<Interval> IntervalUnion::take() {
  std::vector<Interval> out = std::move(merged_);
  merged_.clear();
  if (!unordered_.empty()) {
    out.insert(out.end(), unordered_.begin(), unordered_.end());
    unordered_.clear();
    out = merge_intervals(out);
  }
  return out;
}

std::vector<KernelStats> kernel_table(const Trace& trace, const MetricsScope& scope, size_t top_n) {
  // Keyed by the interned names: a pointer hash per activity.
  std::array<std::unordered_map<Name, KernelStats>, kActivityKindCount> by_kind;
  int64_t grand_total = 0;
  for_each_in_scope(trace, scope, [&](const Activity& a, const Interval& part) {
    auto [it, inserted] = by_kind[static_cast<size_t>(a.kind)].try_emplace(a.name);
    KernelStats& row = it->second;
    const int64_t ns = part.duration_ns();
    if (inserted) {
      row.kind = a.kind;
      row.min_ns = ns;
      row.max_ns = ns;
    }
    ++row.calls;
    row.total_ns += ns;
    row.min_ns = std::min(row.min_ns, ns);
    row.max_ns = std::max(row.max_ns, ns);
    grand_total += ns;
  });

  std::vector<KernelStats> rows;
  for (auto& kind_rows : by_kind) {
    for (auto& [name, row] : kind_rows) {
      row.name = name.str();
      row.mean_ns = static_cast<double>(row.total_ns) / static_cast<double>(row.calls);
      row.share_pct = grand_total > 0 ? 100.0 * static_cast<double>(row.total_ns) /
                                            static_cast<double>(grand_total)
                                      : 0.0;
      rows.push_back(std::move(row));
    }
  }
  std::sort(rows.begin(), rows.end(), [](const KernelStats& a, const KernelStats& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.name != b.name) return a.name < b.name;
    return a.kind < b.kind;
  });
  if (top_n > 0 && rows.size() > top_n) rows.resize(top_n);
  return rows;
}

std::vector<LaneStats> lane_stats(const Trace& trace, const MetricsScope& scope) {
  return lane_stats_of(lanes_of(trace, scope), measured_span(trace, scope.window));
}

Concurrency concurrency(const Trace& trace, const MetricsScope& scope) {
  // A sweep in start order that keeps the ends of the intervals in flight in a min-heap:
  // memory follows the most in flight, not the activity count (a 10M-event trace in the
  // GUI). Starts and ends at the same instant apply together, as in `sweep`. A trace not
  // sorted by start is visited through a sorted index.
  std::vector<uint32_t> order;
  const bool sorted =
      std::is_sorted(trace.activities.begin(), trace.activities.end(),
                     [](const Activity& a, const Activity& b) { return a.start_ns < b.start_ns; });
  if (!sorted) {
    order.resize(trace.activities.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return trace.activities[a].start_ns < trace.activities[b].start_ns;
    });
  }
  const size_t n = trace.activities.size();
  // The next interval in scope (clipped, non-empty) from position k on.
  size_t k = 0;
  const auto next_part = [&]() -> std::optional<Interval> {
    for (; k < n; ++k) {
      const Activity& a = trace.activities[sorted ? k : order[k]];
      if (!scope.kinds.contains(a.kind)) continue;
      const auto part = clip(a.start_ns, a.end_ns, scope.window);
      if (part && part->end_ns > part->start_ns) {
        ++k;
        return part;
      }
    }
    return std::nullopt;
  };
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> ends;

  Concurrency result;
  double weighted_ns = 0;  // integral of in-flight count over time
  std::optional<Interval> pending = next_part();
  while (pending || !ends.empty()) {
    const int64_t now =
        pending ? (ends.empty() ? pending->start_ns : std::min(pending->start_ns, ends.top()))
                : ends.top();
    for (; pending && pending->start_ns == now; pending = next_part()) ends.push(pending->end_ns);
    while (!ends.empty() && ends.top() == now) ends.pop();
    const int in_flight = static_cast<int>(ends.size());
    if (in_flight == 0) continue;
    const int64_t next = pending ? std::min(pending->start_ns, ends.top()) : ends.top();
    const int64_t ns = next - now;
    result.busy_ns += ns;
    if (in_flight >= 2) result.concurrent_ns += ns;
    weighted_ns += static_cast<double>(in_flight) * static_cast<double>(ns);
    result.max_in_flight = std::max(result.max_in_flight, in_flight);
  }
  if (result.busy_ns > 0) {
    const auto busy = static_cast<double>(result.busy_ns);
    result.concurrent_share = static_cast<double>(result.concurrent_ns) / busy;
    result.mean_in_flight = weighted_ns / busy;
  }
  return result;
}

std::vector<LaneGaps> idle_gaps(const Trace& trace, int64_t threshold_ns,
                                const MetricsScope& scope) {
  return idle_gaps_of(lanes_of(trace, scope), threshold_ns);
}

namespace {

// Which range of `category` each range belongs to: itself, or the innermost range of
// the category that encloses it on its device and lane; -1 when none. Computed lazily
// per range, as only ranges that launched device work are asked about.
class RangeOwners {
 public:
  RangeOwners(const std::vector<Range>& ranges, RangeCategory category)
      : ranges_(ranges), category_(category) {
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (ranges[i].id != 0) index_of_id_[ranges[i].id] = i;
      if (ranges[i].category == category)
        by_lane_[{ranges[i].device, ranges[i].lane, ranges[i].rank}].push_back(i);
    }
    for (auto& [lane, list] : by_lane_)
      std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
        return ranges_[a].start_ns < ranges_[b].start_ns;
      });
  }

  // The owner's index for range id `id`; -1 when unknown or outside the category.
  int64_t owner_of(uint64_t id) {
    const auto found = index_of_id_.find(id);
    if (found == index_of_id_.end()) return -1;
    const auto [cached, added] = owner_.try_emplace(found->second, -1);
    if (added) cached->second = find_owner(ranges_[found->second], found->second);
    return cached->second;
  }

 private:
  int64_t find_owner(const Range& r, size_t index) const {
    if (r.category == category_) return static_cast<int64_t>(index);
    const auto lane = by_lane_.find({r.device, r.lane, r.rank});
    if (lane == by_lane_.end()) return -1;
    const std::vector<size_t>& list = lane->second;
    // The latest-starting range that starts no later than r and also ends no earlier.
    auto it = std::upper_bound(list.begin(), list.end(), r.start_ns, [&](int64_t start, size_t i) {
      return start < ranges_[i].start_ns;
    });
    while (it != list.begin()) {
      --it;
      if (ranges_[*it].end_ns >= r.end_ns) return static_cast<int64_t>(*it);
    }
    return -1;
  }

  const std::vector<Range>& ranges_;
  const RangeCategory category_;
  std::unordered_map<uint64_t, size_t> index_of_id_;
  std::map<LaneKey, std::vector<size_t>> by_lane_;  // ranges of the category, by start
  std::unordered_map<size_t, int64_t> owner_;
};

}  // namespace

std::vector<RangeDeviceTime> device_time_by_range(const Trace& trace, RangeCategory category,
                                                  const MetricsScope& scope) {
  RangeOwners owners(trace.ranges, category);
  std::unordered_map<std::string_view, RangeDeviceTime> by_name;
  std::unordered_map<std::string_view, std::unordered_set<int64_t>> instances;
  int64_t total = 0;
  for_each_in_scope(trace, scope, [&](const Activity& a, const Interval& part) {
    if (a.range_id == 0) return;
    const int64_t owner = owners.owner_of(a.range_id);
    const std::string_view name =
        owner < 0 ? std::string_view(kOutsideRanges)
                  : std::string_view(trace.ranges[static_cast<size_t>(owner)].name);
    RangeDeviceTime& row = by_name[name];
    ++row.activities;
    row.device_ns += part.duration_ns();
    if (owner >= 0) instances[name].insert(owner);
    total += part.duration_ns();
  });
  std::vector<RangeDeviceTime> rows;
  for (auto& [name, row] : by_name) {
    row.name = std::string(name);
    row.ranges = instances[name].size();
    row.share_pct =
        total > 0 ? 100.0 * static_cast<double>(row.device_ns) / static_cast<double>(total) : 0.0;
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const RangeDeviceTime& a, const RangeDeviceTime& b) {
    return a.device_ns != b.device_ns ? a.device_ns > b.device_ns : a.name < b.name;
  });
  return rows;
}

TraceSummary summarize(const Trace& trace, const SummaryOptions& options) {
  const MetricsScope& scope = options.scope;
  TraceSummary summary;
  summary.span = measured_span(trace, scope.window);

  for (const Activity& a : trace.activities) {
    if (auto part = clip(a.start_ns, a.end_ns, scope.window)) {
      ++summary.activities;
      summary.time_by_kind_ns[static_cast<size_t>(a.kind)] += part->duration_ns();
    }
  }
  for (const Range& r : trace.ranges)
    if (clip(r.start_ns, r.end_ns, scope.window)) ++summary.ranges;

  summary.kernels = kernel_table(trace, scope);
  summary.kernel_rows = summary.kernels.size();
  if (options.top_n > 0 && summary.kernels.size() > options.top_n)
    summary.kernels.resize(options.top_n);

  const auto lanes = lanes_of(trace, scope);
  summary.lanes = lane_stats_of(lanes, summary.span);
  summary.gaps = idle_gaps_of(lanes, options.gap_threshold_ns);
  summary.concurrency = concurrency(trace, scope);
  summary.device_time_by_layer = device_time_by_range(trace, RangeCategory::layer, scope);
  summary.ranks = rank_balance(trace, scope);
  summary.rank_clocks = rank_clocks(trace.metadata);

  const auto meta = [&](const char* key) {
    const auto it = trace.metadata.extra.find(key);
    return it == trace.metadata.extra.end() ? std::string() : it->second;
  };
  summary.device_tracer = meta(kDeviceTracerKey);
  summary.device_tracer_error = meta(kDeviceTracerErrorKey);
  summary.dropped_records = meta(kDroppedRecordsKey);
  return summary;
}

}  // namespace tunescope::profiler
