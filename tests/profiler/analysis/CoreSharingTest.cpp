// Waits for a core another lane held (CoreSharing.h), on hand-built traces whose
// answers are worked out in the comments: the edges inferred, and what the replay and
// the critical path make of them.
#include <gtest/gtest.h>

#include "profiler/LaneCpus.h"
#include "profiler/analysis/CoreSharing.h"
#include "profiler/analysis/Replay.h"
#include "profiler/analysis/StepAnalysis.h"
#include "tests/profiler/analysis/EventFlows.h"

namespace tunescope::profiler::analysis {
namespace {

using test_support::event;

Activity kernel(const char* name, int stream, int64_t start, int64_t end) {
  Activity a;
  a.kind = ActivityKind::kernel;
  a.name = name;
  a.stream = stream;
  a.start_ns = start;
  a.end_ns = end;
  return a;
}

Trace one_step(std::vector<Activity> activities, std::vector<Flow> flows, int64_t end_ns) {
  Trace t;
  t.activities = std::move(activities);
  t.flows = std::move(flows);
  Range step;
  step.name = "train_step";
  step.category = RangeCategory::iteration;
  step.end_ns = end_ns;
  t.ranges = {step};
  sort_by_start(t);
  return t;
}

size_t node_named(const Trace& t, const DependencyGraph& g, const std::string& name) {
  for (size_t n = 0; n < g.size(); ++n)
    if (t.activities[g.activity[n]].name == name) return n;
  ADD_FAILURE() << "no node " << name;
  return 0;
}

bool has_core_edge(const DependencyGraph& g, size_t from, size_t to) {
  for (const Edge& e : g.predecessors[to])
    if (e.from == from && e.kind == EdgeKind::core) return true;
  return false;
}

// One core for both lanes: lane 0 runs A [0,100] and C [200,300]; lane 1 runs B [110,150]
// after A (an event). The lanes never overlap, so C waited for B although C started 50
// after B ended and 100 after its own release (A): a single wait would not show it.
Trace one_core() {
  return one_step({kernel("A", 0, 0, 100), kernel("B", 1, 110, 150), kernel("C", 0, 200, 300)},
                  {event(0, 100, 1, 105)}, 310);
}

// A core each: lane 0 runs A [0,100], C [400,500]; lane 1 runs B [10,390] from the start,
// overlapping A for 90 of lane 0's 200 busy. C was released by A at 100 and started 10
// after B ended (a wait of 300 that ended with B); E on lane 1 [700,800] after B was
// released at 390 and started 200 after C ended: more than half its wait of 310, so a
// wake-up of its own, not C's core.
Trace two_cores() {
  return one_step({kernel("A", 0, 0, 100), kernel("B", 1, 10, 390), kernel("C", 0, 400, 500),
                   kernel("E", 1, 700, 800)},
                  {}, 810);
}

TEST(CoreSharingTest, LanesThatNeverOverlapSharedOneCore) {
  const Trace t = one_core();
  const TraceAnalysis a = analyze(t);
  const size_t b = node_named(t, a.graph, "B"), c = node_named(t, a.graph, "C");
  EXPECT_EQ(a.graph.core_edges, 1u);  // A->B is already an event
  EXPECT_TRUE(has_core_edge(a.graph, b, c));
  EXPECT_TRUE(shared_one_core(a.graph, a.steps[0].nodes));
  EXPECT_EQ(a.one_core_steps, 1u);
  const Trace both = two_cores();
  const TraceAnalysis two = analyze(both);
  EXPECT_FALSE(shared_one_core(two.graph, two.steps[0].nodes));  // 90 of 200 at once
  EXPECT_EQ(two.one_core_steps, 0u);
  EXPECT_EQ(analyze(t, CoreWaits::none).graph.core_edges, 0u);
}

// The one-core trace's pattern from a run that recorded its lanes' CPUs (cpu_binding).
Trace one_core_bound(const std::string& lane_cpus) {
  Trace t = one_core();
  t.metadata.extra.emplace(kLaneCpusKey, lane_cpus);
  return t;
}

TEST(CoreSharingTest, LanesBoundToCpusOfTheirOwnGetNoCoreEdge) {
  // A CPU each: C's late start was not B's core, so the replay keeps C at its own latency
  // after A.
  const Trace t = one_core_bound("0;1");
  const TraceAnalysis a = analyze(t);
  EXPECT_EQ(a.graph.core_edges, 0u);
  EXPECT_EQ(a.one_core_steps, 0u);
  EXPECT_EQ(a.bound_apart_steps, 1u);
  std::vector<int64_t> durations = recorded_durations(a.graph);
  durations[node_named(t, a.graph, "B")] = 140;  // B grows by 100, off the path
  EXPECT_EQ(predict(t, a, durations).predicted.median_step_ns, 310);
  // Lanes bound to one shared CPU, or one lane unknown, may still have waited for it.
  EXPECT_EQ(analyze(one_core_bound("0;0")).graph.core_edges, 1u);
  EXPECT_EQ(analyze(one_core_bound("0")).graph.core_edges, 1u);
}

TEST(CoreSharingTest, LaneCpusTextRoundTrips) {
  const std::vector<std::vector<int>> lanes = {{0, 2}, {1}, {3, 5, 7}};
  const std::string text = lane_cpus_to_text(lanes);
  EXPECT_EQ(text, "0,2;1;3,5,7");
  const std::map<int, std::vector<int>> back = lane_cpus_from_text(text);
  ASSERT_EQ(back.size(), 3u);
  for (int lane = 0; lane < 3; ++lane) EXPECT_EQ(back.at(lane), lanes[static_cast<size_t>(lane)]);
  for (const char* bad : {"", "0;", "0,,1", "a", "0;-1", "1 2"})
    EXPECT_TRUE(lane_cpus_from_text(bad).empty()) << bad;
}

TEST(CoreSharingTest, OneCoreReplayDelaysTheOtherLaneByTheGrowth) {
  const Trace t = one_core();
  const TraceAnalysis a = analyze(t);
  std::vector<int64_t> durations = recorded_durations(a.graph);
  const size_t b = node_named(t, a.graph, "B"), c = node_named(t, a.graph, "C");
  durations[b] = 140;  // B grows by 100: [110,250]
  const Replay r = replay(a.graph, durations);
  // C keeps its 50 after its binding predecessor (B, released last): [300,400]. Without
  // the core edge it would keep its start at 200, 100 after A.
  EXPECT_EQ(r.start_ns[c], 300);
  EXPECT_EQ(r.end_ns[c], 400);
  const Prediction p = predict(t, a, durations);
  EXPECT_EQ(p.replay_check.median_step_ns, 310);  // the recording, edges and all
  EXPECT_EQ(p.predicted.median_step_ns, 410);     // the anchor C ends 100 later
}

TEST(CoreSharingTest, TwoCoresTakeOnlyAWaitThatEndedWithAnotherLane) {
  const Trace t = two_cores();
  const TraceAnalysis a = analyze(t);
  const size_t b = node_named(t, a.graph, "B"), c = node_named(t, a.graph, "C"),
               e = node_named(t, a.graph, "E");
  EXPECT_EQ(a.graph.core_edges, 1u);
  EXPECT_TRUE(has_core_edge(a.graph, b, c));
  EXPECT_FALSE(has_core_edge(a.graph, c, e));
  std::vector<int64_t> durations = recorded_durations(a.graph);
  durations[b] = 190;  // B halves: [10,200], so C starts 10 after it
  const Replay r = replay(a.graph, durations);
  EXPECT_EQ(r.start_ns[c], 210);
  EXPECT_EQ(r.start_ns[e], 510);  // E keeps its 310 after B, which now ends at 200
}

TEST(CoreSharingTest, TheHolderIsOnTheCriticalPathAndTheWaitIsAKernelWait) {
  const Trace t = two_cores();
  const TraceAnalysis a = analyze(t);
  const size_t b = node_named(t, a.graph, "B"), e = node_named(t, a.graph, "E");
  // The path back from E: E <- B (lane order, released at 390), not through C.
  const std::vector<size_t> expected{b, e};
  EXPECT_EQ(a.recorded.median_path.nodes, expected);
  // Lane 0 waited 300 before C for B's core: a kernel wait, not "other".
  for (const LaneIdle& lane : a.idle)
    if (lane.stream == 0) {
      EXPECT_EQ(lane.kernel_wait_ns, 300);
      EXPECT_EQ(lane.other_ns, 0);
    }
}

}  // namespace
}  // namespace tunescope::profiler::analysis
