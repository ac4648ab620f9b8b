// Device time by layer from range ids alone (hand-built traces, no CUPTI): work tagged
// with a layer, with an op range nested in a layer on the same lane, with a range outside
// every layer, with an unknown id, or untagged; clipping to a window; and the report table.
#include <gtest/gtest.h>

#include "profiler/Metrics.h"
#include "profiler/MetricsReport.h"

namespace tunescope::profiler {
namespace {

Range range(const char* name, RangeCategory category, int lane, int64_t start, int64_t end,
            uint64_t id) {
  Range r;
  r.name = name;
  r.category = category;
  r.lane = lane;
  r.start_ns = start;
  r.end_ns = end;
  r.id = id;
  return r;
}

Activity work(int stream, int64_t start, int64_t end, uint64_t range_id,
              ActivityKind kind = ActivityKind::kernel) {
  Activity a;
  a.kind = kind;
  a.name = "k";
  a.stream = stream;
  a.start_ns = start;
  a.end_ns = end;
  a.range_id = range_id;
  return a;
}

// Lane 0: conv1 [0,100) holding op [10,20), then update phase [200,300) outside any layer.
// Lane 1: conv1 again [0,50) (a second instance of the layer, say another replica).
// Device work runs later than its launch, on streams 7 and 8.
Trace layered_trace() {
  Trace t;
  t.ranges = {range("conv1", RangeCategory::layer, 0, 0, 100, 1),
              range("op", RangeCategory::phase, 0, 10, 20, 2),
              range("update", RangeCategory::phase, 0, 200, 300, 3),
              range("conv1", RangeCategory::layer, 1, 0, 50, 4),
              range("op", RangeCategory::phase, 2, 10, 20, 5)};
  t.activities = {work(7, 1'000, 1'400, 2),   // via the op range: conv1
                  work(7, 1'400, 1'500, 1),   // conv1 directly
                  work(8, 1'000, 1'300, 4),   // the other conv1 instance
                  work(7, 2'000, 2'050, 3),   // update: outside every layer
                  work(7, 2'100, 2'110, 5),   // an op on a lane without layers: outside
                  work(7, 3'000, 3'500, 0),   // untagged: not counted
                  work(7, 4'000, 4'100, 99),  // an id the trace does not hold: outside
                  work(7, 5'000, 5'600, 1, ActivityKind::sync)};  // not work
  return t;
}

TEST(DeviceTimeByRange, WorkIsCountedForItsLayerThroughNestedRangesOnTheSameLane) {
  const std::vector<RangeDeviceTime> rows =
      device_time_by_range(layered_trace(), RangeCategory::layer);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "conv1");
  EXPECT_EQ(rows[0].device_ns, 400 + 100 + 300);
  EXPECT_EQ(rows[0].activities, 3u);
  EXPECT_EQ(rows[0].ranges, 2u);
  EXPECT_EQ(rows[1].name, kOutsideRanges);
  EXPECT_EQ(rows[1].device_ns, 50 + 10 + 100);
  EXPECT_EQ(rows[1].ranges, 0u);
  EXPECT_DOUBLE_EQ(rows[0].share_pct, 100.0 * 800 / 960);
  EXPECT_DOUBLE_EQ(rows[1].share_pct, 100.0 * 160 / 960);
}

TEST(DeviceTimeByRange, FollowsTheScopesWindowAndKinds) {
  MetricsScope scope;
  scope.window = Interval{1'200, 2'000};
  const auto rows = device_time_by_range(layered_trace(), RangeCategory::layer, scope);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].device_ns, 200 + 100 + 100);
  scope.window.reset();
  scope.kinds = KindSet{ActivityKind::sync};
  const auto syncs = device_time_by_range(layered_trace(), RangeCategory::layer, scope);
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0].device_ns, 600);
}

TEST(DeviceTimeByRange, PhasesAreACategoryToo) {
  const auto rows = device_time_by_range(layered_trace(), RangeCategory::phase);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, kOutsideRanges);  // conv1's own 100 + 300 + the unknown id's 100
  EXPECT_EQ(rows[0].device_ns, 500);
  EXPECT_EQ(rows[1].name, "op");
  EXPECT_EQ(rows[1].device_ns, 410);
  EXPECT_EQ(rows[1].ranges, 2u);
  EXPECT_EQ(rows[2].name, "update");
}

TEST(DeviceTimeByRange, TracesWithoutRangeIdsHaveNoRowsAndNoReportSection) {
  Trace t = layered_trace();
  for (Activity& a : t.activities) a.range_id = 0;
  EXPECT_TRUE(device_time_by_range(t, RangeCategory::layer).empty());
  EXPECT_EQ(format_summary(summarize(t)).find("device time by layer"), std::string::npos);
  const std::string report = format_summary(summarize(layered_trace()));
  EXPECT_NE(report.find("device time by layer:"), std::string::npos) << report;
  EXPECT_NE(report.find("conv1"), std::string::npos) << report;
}

}  // namespace
}  // namespace tunescope::profiler
