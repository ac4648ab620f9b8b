// Tests of trace metrics on hand-built traces with answers worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "profiler/Metrics.h"

namespace tunescope::profiler {
namespace {

Activity activity(const std::string& name, int device, int stream, int64_t start, int64_t end,
                  ActivityKind kind = ActivityKind::kernel) {
  Activity a;
  a.kind = kind;
  a.name = name;
  a.device = device;
  a.stream = stream;
  a.start_ns = start;
  a.end_ns = end;
  return a;
}

Trace trace_of(std::vector<Activity> activities) {
  Trace trace;
  trace.activities = std::move(activities);
  return trace;
}

const KernelStats& row_named(const std::vector<KernelStats>& rows, const std::string& name) {
  auto it =
      std::find_if(rows.begin(), rows.end(), [&](const KernelStats& r) { return r.name == name; });
  if (it == rows.end()) throw std::runtime_error("no row " + name);
  return *it;
}

TEST(MetricsTest, KernelTableSumsCallsAndSharesSortedByTotal) {
  const Trace trace = trace_of({activity("pad", 0, 0, 0, 10), activity("gemm", 0, 1, 0, 60),
                                activity("pad", 0, 0, 20, 30), activity("pad", 0, 0, 40, 60)});
  const auto rows = kernel_table(trace);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "gemm");
  EXPECT_EQ(rows[0].calls, 1u);
  EXPECT_EQ(rows[0].total_ns, 60);
  EXPECT_DOUBLE_EQ(rows[0].share_pct, 60.0);
  EXPECT_EQ(rows[1].name, "pad");
  EXPECT_EQ(rows[1].calls, 3u);
  EXPECT_EQ(rows[1].total_ns, 40);
  EXPECT_DOUBLE_EQ(rows[1].mean_ns, 40.0 / 3.0);
  EXPECT_EQ(rows[1].min_ns, 10);
  EXPECT_EQ(rows[1].max_ns, 20);
  EXPECT_DOUBLE_EQ(rows[1].share_pct, 40.0);
}

TEST(MetricsTest, KernelTableTopNKeepsSharesOfEverything) {
  const Trace trace = trace_of(
      {activity("a", 0, 0, 0, 50), activity("b", 0, 0, 50, 80), activity("c", 0, 0, 80, 100)});
  const auto rows = kernel_table(trace, {}, 2);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "a");
  EXPECT_EQ(rows[1].name, "b");
  EXPECT_DOUBLE_EQ(rows[0].share_pct, 50.0);
  EXPECT_DOUBLE_EQ(rows[1].share_pct, 30.0);
}

TEST(MetricsTest, KernelTableFollowsTheScopesKinds) {
  const Trace trace =
      trace_of({activity("conv", 0, 0, 0, 30), activity("conv", 0, 0, 30, 40, ActivityKind::memcpy),
                activity("wait", 0, 0, 40, 100, ActivityKind::sync)});
  // Default: work kinds, one row per (kind, name); waits left out.
  const auto work = kernel_table(trace);
  ASSERT_EQ(work.size(), 2u);
  EXPECT_EQ(work[0].kind, ActivityKind::kernel);
  EXPECT_DOUBLE_EQ(work[0].share_pct, 75.0);
  EXPECT_EQ(work[1].kind, ActivityKind::memcpy);

  MetricsScope kernels_only;
  kernels_only.kinds = {ActivityKind::kernel};
  const auto kernels = kernel_table(trace, kernels_only);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(kernels[0].share_pct, 100.0);

  MetricsScope all_kinds;
  all_kinds.kinds = KindSet::all();
  const auto everything = kernel_table(trace, all_kinds);
  EXPECT_EQ(everything.size(), 3u);
  EXPECT_EQ(everything[0].name, "wait");
}

TEST(MetricsTest, MergeIntervalsUnitesOverlapsAndTouches) {
  const auto merged =
      merge_intervals({{20, 30}, {0, 10}, {5, 15}, {15, 18}, {40, 40}, {50, 60}, {52, 55}});
  EXPECT_EQ(merged, (std::vector<Interval>{{0, 18}, {20, 30}, {50, 60}}));
  EXPECT_TRUE(merge_intervals({}).empty());
}

TEST(MetricsTest, LaneBusyTimeIsTheUnionOfOverlappingActivities) {
  const Trace trace = trace_of({activity("a", 0, 0, 0, 10), activity("b", 0, 0, 5, 15),
                                activity("c", 0, 0, 20, 30), activity("d", 1, 3, 0, 40)});
  const auto lanes = lane_stats(trace);
  ASSERT_EQ(lanes.size(), 2u);
  EXPECT_EQ(lanes[0].lane, (LaneKey{0, 0}));
  EXPECT_EQ(lanes[0].activities, 3u);
  EXPECT_EQ(lanes[0].busy_ns, 25);
  EXPECT_EQ(lanes[0].span, (Interval{0, 30}));
  EXPECT_DOUBLE_EQ(lanes[0].utilisation, 25.0 / 40.0);  // trace span is 0..40
  EXPECT_EQ(lanes[1].lane, (LaneKey{1, 3}));
  EXPECT_DOUBLE_EQ(lanes[1].utilisation, 1.0);
}

TEST(MetricsTest, ConcurrencyOfTwoLanesOverlappingAQuarterOfBusyTime) {
  const Trace trace = trace_of({activity("a", 0, 0, 0, 100), activity("b", 0, 1, 75, 100)});
  const Concurrency c = concurrency(trace);
  EXPECT_EQ(c.busy_ns, 100);
  EXPECT_EQ(c.concurrent_ns, 25);
  EXPECT_DOUBLE_EQ(c.concurrent_share, 0.25);
  EXPECT_DOUBLE_EQ(c.mean_in_flight, 1.25);
  EXPECT_EQ(c.max_in_flight, 2);
}

TEST(MetricsTest, ConcurrencyCountsThreeInFlightAndSkipsIdleTime) {
  // 0..10: 1, 10..20: 3, 20..30: 2, 30..40 idle, 40..50: 1 -> busy 40.
  const Trace trace = trace_of({activity("a", 0, 0, 0, 30), activity("b", 0, 1, 10, 20),
                                activity("c", 0, 2, 10, 30), activity("d", 0, 0, 40, 50)});
  const Concurrency c = concurrency(trace);
  EXPECT_EQ(c.busy_ns, 40);
  EXPECT_EQ(c.concurrent_ns, 20);
  EXPECT_DOUBLE_EQ(c.concurrent_share, 0.5);
  EXPECT_DOUBLE_EQ(c.mean_in_flight, (10 * 1 + 10 * 3 + 10 * 2 + 10 * 1) / 40.0);
  EXPECT_EQ(c.max_in_flight, 3);
}

TEST(MetricsTest, ConcurrencyMatchesCountingEveryNanosecond) {
  // Random small traces (zero-length, back-to-back, nested and equal intervals occur)
  // against the definition: per 1 ns step, how many activities cover it.
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<Activity> activities;
    const int n = std::uniform_int_distribution<int>(0, 12)(rng);
    for (int i = 0; i < n; ++i) {
      const int64_t start = std::uniform_int_distribution<int64_t>(0, 40)(rng);
      const int64_t length = std::uniform_int_distribution<int64_t>(0, 15)(rng);
      activities.push_back(activity("k", 0, i % 3, start, start + length));
    }
    const Trace trace = trace_of(activities);
    int64_t busy = 0, concurrent = 0, weighted = 0;
    int most = 0;
    for (int64_t t = 0; t < 60; ++t) {
      int covering = 0;
      for (const Activity& a : activities) covering += a.start_ns <= t && t < a.end_ns;
      busy += covering > 0;
      concurrent += covering >= 2;
      weighted += covering;
      most = std::max(most, covering);
    }
    // In the order made (the sweep goes through a sorted index) and sorted by start.
    Trace sorted = trace;
    sort_by_start(sorted);
    for (const Trace* t : {&trace, static_cast<const Trace*>(&sorted)}) {
      const Concurrency c = concurrency(*t);
      ASSERT_EQ(c.busy_ns, busy) << "round " << round;
      ASSERT_EQ(c.concurrent_ns, concurrent) << "round " << round;
      ASSERT_EQ(c.max_in_flight, most) << "round " << round;
      if (busy > 0) {
        ASSERT_NEAR(c.mean_in_flight, static_cast<double>(weighted) / static_cast<double>(busy),
                    1e-12);
      }
    }
  }
}

TEST(MetricsTest, IntervalUnionMatchesMergeIntervalsInAnyOrder) {
  // Random intervals (empty, touching, nested, equal) added in start order, in random
  // order and in start order with a few out of place: the same union as merge_intervals.
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    std::vector<Interval> intervals;
    const int n = std::uniform_int_distribution<int>(0, 14)(rng);
    for (int i = 0; i < n; ++i) {
      const int64_t start = std::uniform_int_distribution<int64_t>(0, 50)(rng);
      intervals.push_back({start, start + std::uniform_int_distribution<int64_t>(0, 12)(rng)});
    }
    const std::vector<Interval> expected = merge_intervals(intervals);
    std::vector<Interval> in_order = intervals;
    std::sort(in_order.begin(), in_order.end(),
              [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
    std::vector<Interval> nearly = in_order;
    if (nearly.size() > 2) std::swap(nearly[0], nearly[nearly.size() / 2]);
    for (const std::vector<Interval>* order : {&intervals, &in_order, &nearly}) {
      IntervalUnion u;
      for (const Interval& i : *order) u.add(i);
      ASSERT_EQ(u.take(), expected) << "round " << round;
      ASSERT_TRUE(u.take().empty());
    }
  }
}

TEST(MetricsTest, BackToBackActivitiesAreNotConcurrent) {
  const Trace trace = trace_of({activity("a", 0, 0, 0, 10), activity("b", 0, 1, 10, 20)});
  const Concurrency c = concurrency(trace);
  EXPECT_EQ(c.busy_ns, 20);
  EXPECT_EQ(c.concurrent_ns, 0);
  EXPECT_EQ(c.max_in_flight, 1);
  EXPECT_DOUBLE_EQ(c.mean_in_flight, 1.0);
}

TEST(MetricsTest, IdleGapsPerLaneWithThreshold) {
  const Trace trace =
      trace_of({activity("a", 0, 0, 0, 10), activity("b", 0, 0, 8, 10), activity("c", 0, 0, 15, 20),
                activity("d", 0, 0, 40, 50), activity("e", 0, 1, 100, 200)});
  const auto gaps = idle_gaps(trace, /*threshold_ns=*/10);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].lane, (LaneKey{0, 0}));
  EXPECT_EQ(gaps[0].count, 2u);
  EXPECT_EQ(gaps[0].total_ns, 25);
  EXPECT_EQ(gaps[0].largest_ns, 20);
  EXPECT_EQ(gaps[0].long_gaps, (std::vector<Interval>{{20, 40}}));
  // A lane with one activity has no gap, whatever the rest of the trace does.
  EXPECT_EQ(gaps[1].count, 0u);
  EXPECT_EQ(gaps[1].total_ns, 0);
}

TEST(MetricsTest, WindowClipsActivitiesInEveryMetric) {
  const Trace trace = trace_of({activity("a", 0, 0, 0, 100), activity("b", 0, 1, 120, 140),
                                activity("c", 0, 1, 300, 400), activity("tick", 0, 0, 110, 110)});
  const MetricsScope scope{.window = Interval{50, 150}};

  const auto rows = kernel_table(trace, scope);
  EXPECT_EQ(row_named(rows, "a").total_ns, 50);
  EXPECT_EQ(row_named(rows, "a").calls, 1u);
  EXPECT_EQ(row_named(rows, "b").total_ns, 20);
  EXPECT_EQ(row_named(rows, "tick").calls, 1u);  // an instant inside the window
  EXPECT_EQ(row_named(rows, "tick").total_ns, 0);
  EXPECT_EQ(
      std::count_if(rows.begin(), rows.end(), [](const KernelStats& r) { return r.name == "c"; }),
      0);

  EXPECT_EQ(measured_span(trace, scope.window), (Interval{50, 150}));
  const auto lanes = lane_stats(trace, scope);
  ASSERT_EQ(lanes.size(), 2u);
  EXPECT_EQ(lanes[0].busy_ns, 50);
  EXPECT_EQ(lanes[0].span, (Interval{50, 110}));
  EXPECT_DOUBLE_EQ(lanes[0].utilisation, 0.5);
  EXPECT_EQ(lanes[1].activities, 1u);
  EXPECT_DOUBLE_EQ(lanes[1].utilisation, 0.2);

  const Concurrency c = concurrency(trace, scope);
  EXPECT_EQ(c.busy_ns, 70);
  EXPECT_EQ(c.concurrent_ns, 0);

  const auto gaps = idle_gaps(trace, 0, scope);
  EXPECT_EQ(gaps[1].count, 0u);  // lane 1's gap to 300 lies outside the window
}

TEST(MetricsTest, WindowOverlapCountsOnlyTheOverlapAsConcurrent) {
  const Trace trace = trace_of({activity("a", 0, 0, 0, 100), activity("b", 0, 1, 50, 150)});
  const Concurrency c = concurrency(trace, {.window = Interval{90, 120}});
  EXPECT_EQ(c.busy_ns, 30);
  EXPECT_EQ(c.concurrent_ns, 10);
}

TEST(MetricsTest, MeasuredSpanCoversAllKindsOfActivities) {
  const Trace trace =
      trace_of({activity("k", 0, 0, 10, 20), activity("w", 0, 0, 0, 40, ActivityKind::sync)});
  EXPECT_EQ(measured_span(trace), (Interval{0, 40}));
  // Utilisation is busy work over that span: the wait is not work.
  EXPECT_DOUBLE_EQ(lane_stats(trace).at(0).utilisation, 0.25);
  EXPECT_EQ(measured_span(Trace{}), (Interval{0, 0}));
}

TEST(MetricsTest, SummaryBundlesTheMetrics) {
  Trace trace = trace_of({activity("a", 0, 0, 0, 40), activity("b", 0, 1, 30, 50),
                          activity("c", 0, 1, 60, 70),
                          activity("launch", 0, 0, 40, 45, ActivityKind::overhead)});
  Range range;
  range.name = "iteration";
  range.category = RangeCategory::iteration;
  range.start_ns = 0;
  range.end_ns = 70;
  trace.ranges.push_back(range);

  SummaryOptions options;
  options.top_n = 2;
  options.gap_threshold_ns = 5;
  const TraceSummary s = summarize(trace, options);
  EXPECT_EQ(s.span, (Interval{0, 70}));
  EXPECT_EQ(s.activities, 4u);
  EXPECT_EQ(s.ranges, 1u);
  EXPECT_EQ(s.time_by_kind_ns[static_cast<size_t>(ActivityKind::kernel)], 70);
  EXPECT_EQ(s.time_by_kind_ns[static_cast<size_t>(ActivityKind::overhead)], 5);
  EXPECT_EQ(s.kernel_rows, 3u);
  ASSERT_EQ(s.kernels.size(), 2u);
  EXPECT_EQ(s.kernels[0].name, "a");
  ASSERT_EQ(s.lanes.size(), 2u);
  EXPECT_EQ(s.lanes[1].busy_ns, 30);
  EXPECT_EQ(s.concurrency.concurrent_ns, 10);
  ASSERT_EQ(s.gaps.size(), 2u);
  EXPECT_EQ(s.gaps[1].long_gaps, (std::vector<Interval>{{50, 60}}));

  // Same answers as the individual functions.
  EXPECT_EQ(s.lanes[0].busy_ns, lane_stats(trace)[0].busy_ns);
  EXPECT_EQ(s.concurrency.busy_ns, concurrency(trace).busy_ns);
}

TEST(MetricsTest, EmptyTraceGivesZerosNotNaNs) {
  const TraceSummary s = summarize(Trace{});
  EXPECT_EQ(s.activities, 0u);
  EXPECT_TRUE(s.kernels.empty());
  EXPECT_TRUE(s.lanes.empty());
  EXPECT_EQ(s.concurrency.busy_ns, 0);
  EXPECT_EQ(s.concurrency.concurrent_share, 0.0);
  EXPECT_EQ(s.concurrency.mean_in_flight, 0.0);
}

}  // namespace
}  // namespace tunescope::profiler
