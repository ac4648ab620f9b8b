// Event flows from CUDA event record/wait, on hand-built CUPTI-like records whose
// answer is known: the wait binds to the latest record before it, the flow runs from
// the captured work's end to the waiting stream's next work, and the graph then makes
// the second stream's kernel wait for the first's.
#include <gtest/gtest.h>

#include "profiler/CudaEventFlows.h"
#include "profiler/analysis/DependencyGraph.h"

namespace tunescope::profiler {
namespace {

Activity work(const char* name, int stream, int64_t start, int64_t end, uint64_t correlation,
              ActivityKind kind = ActivityKind::kernel) {
  Activity a;
  a.kind = kind;
  a.name = name;
  a.device = 0;
  a.stream = stream;
  a.start_ns = start;
  a.end_ns = end;
  a.correlation = correlation;
  return a;
}

// Calls in order (correlation ids): 1 launch k1 on stream 7, 2 record event 40 on
// stream 7, 3 launch k2 on stream 7, 4 stream 9 waits event 40, 5 launch k3 on stream 9,
// 6 record event 40 again on stream 7 (after the wait: not the one waited for).
std::vector<Activity> activities() {
  return {work("k1", 7, 100, 200, 1), work("k2", 7, 210, 400, 3), work("k3", 9, 205, 300, 5)};
}

TEST(CudaEventFlowsTest, AWaitRunsFromTheRecordedWorkToTheWaitingStreamsNextWork) {
  const std::vector<CudaEventUse> records{{40, 0, 7, 2}, {40, 0, 7, 6}};
  const std::vector<CudaEventUse> waits{{40, 0, 9, 4}};
  const auto flows = cuda_event_flows(activities(), records, waits);
  ASSERT_EQ(flows.size(), 1u);
  EXPECT_EQ(flows[0].kind, FlowKind::event);
  // From k1's end (the work before the record, not k2) to k3's start.
  EXPECT_EQ(flows[0].from.stream, 7);
  EXPECT_EQ(flows[0].from.ns, 200);
  EXPECT_EQ(flows[0].to.stream, 9);
  EXPECT_EQ(flows[0].to.ns, 205);

  Trace t;
  t.activities = activities();
  t.flows = flows;
  sort_by_start(t);
  const auto g = analysis::build_dependency_graph(t);
  EXPECT_EQ(g.flows_bound, 1u);
  // k3 (node 1 in start order: k1, k3, k2) waits for k1 by the event.
  ASSERT_EQ(g.predecessors[1].size(), 1u);
  EXPECT_EQ(g.predecessors[1][0].from, 0u);
  EXPECT_EQ(g.predecessors[1][0].kind, analysis::EdgeKind::event);
}

TEST(CudaEventFlowsTest, WaitsWithoutARecordCapturedWorkOrLaterWorkGiveNoFlow) {
  // No record before the wait.
  EXPECT_TRUE(cuda_event_flows(activities(), {{40, 0, 7, 6}}, {{40, 0, 9, 4}}).empty());
  // Another event's record.
  EXPECT_TRUE(cuda_event_flows(activities(), {{41, 0, 7, 2}}, {{40, 0, 9, 4}}).empty());
  // Recorded before anything was launched on its stream: complete at once.
  EXPECT_TRUE(cuda_event_flows(activities(), {{40, 0, 7, 0}}, {{40, 0, 9, 4}}).empty());
  // Nothing launched on the waiting stream after the wait.
  EXPECT_TRUE(cuda_event_flows(activities(), {{40, 0, 7, 2}}, {{40, 0, 9, 7}}).empty());
  // Host records (device -1) and activities without correlation are not device work.
  auto host = activities();
  for (Activity& a : host) a.device = -1;
  EXPECT_TRUE(cuda_event_flows(host, {{40, 0, 7, 2}}, {{40, 0, 9, 4}}).empty());
}

}  // namespace
}  // namespace tunescope::profiler
