// Critical path, idle breakdown and replay on small hand-built graphs whose answers are
// worked out in the comments.
#include <gtest/gtest.h>

#include "profiler/analysis/CriticalPath.h"
#include "profiler/analysis/DependencyGraph.h"
#include "profiler/analysis/Replay.h"
#include "profiler/analysis/StepAnalysis.h"
#include "profiler/analysis/WhatIf.h"
#include "tests/profiler/analysis/EventFlows.h"

namespace tunescope::profiler::analysis {
namespace {

using test_support::event;

Activity activity(const char* name, int stream, int64_t start, int64_t end,
                  ActivityKind kind = ActivityKind::kernel, int device = 0,
                  uint64_t correlation = 0) {
  Activity a;
  a.kind = kind;
  a.name = name;
  a.device = device;
  a.stream = stream;
  a.start_ns = start;
  a.end_ns = end;
  a.correlation = correlation;
  return a;
}

// Lane 0 runs A [0,10], B [12,20], D [35,40]; lane 1 runs C [11,31] after A (an event),
// and D waits for C (an event). One step [0,42].
Trace diamond() {
  Trace t;
  t.activities = {activity("A", 0, 0, 10), activity("C", 1, 11, 31), activity("B", 0, 12, 20),
                  activity("D", 0, 35, 40)};
  t.flows = {event(0, 10, 1, 11), event(1, 31, 0, 33)};
  Range step;
  step.name = "train_step";
  step.category = RangeCategory::iteration;
  step.start_ns = 0;
  step.end_ns = 42;
  t.ranges = {step};
  sort_by_start(t);
  return t;
}

std::vector<std::string> names(const Trace& t, const DependencyGraph& g,
                               const std::vector<size_t>& nodes) {
  std::vector<std::string> out;
  for (size_t n : nodes) out.push_back(t.activities[g.activity[n]].name);
  return out;
}

int64_t bound(const CriticalPath& p, Bound b) { return p.bound_ns[static_cast<size_t>(b)]; }

TEST(DependencyGraphTest, FlowsBindToTheActivitiesAroundTheirEnds) {
  const Trace t = diamond();
  const DependencyGraph g = build_dependency_graph(t);
  ASSERT_EQ(g.size(), 4u);  // A C B D
  EXPECT_EQ(g.flows_bound, 2u);
  EXPECT_EQ(g.lanes, 2u);
  ASSERT_EQ(g.predecessors[1].size(), 1u);  // C after A
  EXPECT_EQ(g.predecessors[1][0].from, 0u);
  EXPECT_EQ(g.predecessors[1][0].kind, EdgeKind::event);
  ASSERT_EQ(g.predecessors[3].size(), 2u);  // D after B (lane) and C (event)
  EXPECT_EQ(g.predecessors[3][0].from, 2u);
  EXPECT_EQ(g.predecessors[3][0].kind, EdgeKind::lane);
  EXPECT_EQ(g.predecessors[3][1].from, 1u);
}

TEST(DependencyGraphTest, NestedActivitiesAreNotNodesAndBackwardFlowsAreRefused) {
  Trace t = diamond();
  t.activities.push_back(activity("inner", 0, 2, 8));
  t.flows.push_back(event(0, 40, 1, 5));   // from D's end back to before C: not causal
  t.flows.push_back(event(5, 10, 1, 11));  // from a lane with nothing on it
  sort_by_start(t);
  const DependencyGraph g = build_dependency_graph(t);
  EXPECT_EQ(g.size(), 4u);
  EXPECT_EQ(g.flows_bound, 2u);
  EXPECT_EQ(g.flows_unbound, 2u);
}

TEST(CriticalPathTest, FollowsTheLastReleasedPredecessorAndAccountsForTheWholeStep) {
  const Trace t = diamond();
  const DependencyGraph g = build_dependency_graph(t);
  const auto steps = find_steps(t, g);
  ASSERT_EQ(steps.size(), 1u);
  const CriticalPath p = critical_path(g, t, Timing{g.start_ns, g.end_ns}, steps[0], 0, 42);
  EXPECT_EQ(names(t, g, p.nodes), (std::vector<std::string>{"A", "C", "D"}));
  EXPECT_EQ(bound(p, Bound::compute), 10 + 20 + 5);
  // C starts 1 after A, D 4 after C: event latencies; the host waits 2 after D.
  EXPECT_EQ(bound(p, Bound::synchronisation), 1 + 4 + 2);
  EXPECT_EQ(bound(p, Bound::data_wait), 0);
  EXPECT_EQ(bound(p, Bound::idle), 0);
}

TEST(CriticalPathTest, AnAllReduceOnThePathIsCommunicationNotCompute) {
  // The diamond with C renamed as a rank's all-reduce bucket: its 20 ns (the wait for the
  // other ranks included) move from compute to communication.
  Trace t = diamond();
  for (Activity& a : t.activities)
    if (a.name == "C") a.name = "allreduce.bucket0";
  const DependencyGraph g = build_dependency_graph(t);
  const auto steps = find_steps(t, g);
  ASSERT_EQ(steps.size(), 1u);
  const CriticalPath p = critical_path(g, t, Timing{g.start_ns, g.end_ns}, steps[0], 0, 42);
  EXPECT_EQ(bound(p, Bound::compute), 10 + 5);
  EXPECT_EQ(bound(p, Bound::communication), 20);
  EXPECT_EQ(bound(p, Bound::synchronisation), 1 + 4 + 2);
}

TEST(CriticalPathTest, LaunchLatencyIsOverheadAndTheLaunchItselfIsNotOnThePath) {
  // A host launch [0,3] (correlation 5) and its kernel [2,10] on a device stream.
  Trace t;
  t.activities = {activity("cudaLaunchKernel", 0, 0, 3, ActivityKind::overhead, -1, 5),
                  activity("sgemm", 7, 2, 10, ActivityKind::kernel, 0, 5)};
  const DependencyGraph g = build_dependency_graph(t);
  EXPECT_EQ(g.launch_edges, 1u);
  const auto steps = find_steps(t, g);  // no iteration range: the whole trace
  ASSERT_EQ(steps.size(), 1u);
  const CriticalPath p = critical_path(g, t, Timing{g.start_ns, g.end_ns}, steps[0], 0, 10);
  EXPECT_EQ(bound(p, Bound::compute), 8);
  EXPECT_EQ(bound(p, Bound::launch_overhead), 2);  // from the launch's start to the kernel's
  EXPECT_EQ(names(t, g, p.nodes), (std::vector<std::string>{"cudaLaunchKernel", "sgemm"}));
}

TEST(IdleBreakdownTest, GapsAreClassifiedByWhatReleasedTheNextActivity) {
  const Trace t = diamond();
  const DependencyGraph g = build_dependency_graph(t);
  const auto idle = idle_breakdown(g, t, find_steps(t, g)[0]);
  ASSERT_EQ(idle.size(), 2u);
  // Lane 0: B 2 after A by lane order (other), D 15 after B waiting for C (kernel wait).
  EXPECT_EQ(idle[0].busy_ns, 10 + 8 + 5);
  EXPECT_EQ(idle[0].other_ns, 2);
  EXPECT_EQ(idle[0].kernel_wait_ns, 15);
  EXPECT_EQ(idle[0].host_wait_ns, 0);
  // Lane 1: C 11 after the step's start, waiting for A.
  EXPECT_EQ(idle[1].kernel_wait_ns, 11);
}

TEST(ReplayTest, RecordedDurationsGiveTheTraceBack) {
  const Trace t = diamond();
  const DependencyGraph g = build_dependency_graph(t);
  const Replay r = replay(g, recorded_durations(g));
  EXPECT_EQ(r.start_ns, g.start_ns);
  EXPECT_EQ(r.end_ns, g.end_ns);
}

TEST(ReplayTest, TypicalLatenciesAreTheMedianOfTheirClass) {
  // One lane: A [0,10], B 2 after it [12,20], E 10 after B [30,35] (a preemption), F 1
  // after E [36,40]. B, E and F in one class: latencies 2, 10, 1, median 2.
  Trace t;
  t.activities = {activity("A", 0, 0, 10), activity("B", 0, 12, 20), activity("E", 0, 30, 35),
                  activity("F", 0, 36, 40)};
  const DependencyGraph g = build_dependency_graph(t);
  EXPECT_EQ(recorded_latencies(g), (std::vector<int64_t>{0, 2, 10, 1}));
  const auto typical = typical_latencies(g, {0, 1, 1, 1});
  EXPECT_EQ(typical, (std::vector<int64_t>{0, 2, 2, 2}));
  const Replay r = replay(g, recorded_durations(g), &typical);
  EXPECT_EQ(r.start_ns, (std::vector<int64_t>{0, 12, 22, 29}));
  EXPECT_EQ(r.end_ns, (std::vector<int64_t>{10, 20, 27, 33}));
  // Each its own class: the recording.
  const auto own = typical_latencies(g, {0, 1, 2, 3});
  EXPECT_EQ(replay(g, recorded_durations(g), &own).end_ns, g.end_ns);
}

TEST(ReplayTest, AShorterCriticalActivityMovesItsSuccessorsUntilAnotherPathBinds) {
  const Trace t = diamond();
  const TraceAnalysis analysis = analyze(t);
  EXPECT_EQ(analysis.recorded.median_step_ns, 42);
  // C at half: C [11,21], D starts 4 after it [25,30]: the step ends 2 later, at 32.
  auto half = scaled_durations(t, analysis.graph, recorded_durations(analysis.graph), {{"C", 0.5}});
  Prediction p = predict(t, analysis, half);
  EXPECT_EQ(p.replay_check.median_step_ns, 42);
  EXPECT_EQ(p.predicted.median_step_ns, 32);
  EXPECT_EQ(names(t, analysis.graph, p.predicted.median_path.nodes),
            (std::vector<std::string>{"A", "C", "D"}));
  // C at a quarter: C [11,16] ends before B [12,20]; D now waits for B: [24,29], step 31.
  auto quarter =
      scaled_durations(t, analysis.graph, recorded_durations(analysis.graph), {{"C", 0.25}});
  p = predict(t, analysis, quarter);
  EXPECT_EQ(p.predicted.median_step_ns, 31);
  EXPECT_EQ(names(t, analysis.graph, p.predicted.median_path.nodes),
            (std::vector<std::string>{"A", "B", "D"}));
  // A longer A delays everything after it, on both lanes: +10 on the step.
  auto slow_a = scaled_durations(t, analysis.graph, recorded_durations(analysis.graph), {{"A", 2}});
  EXPECT_EQ(predict(t, analysis, slow_a).predicted.median_step_ns, 52);
}

TEST(ReplayTest, AsynchronousWorkOfOneStepDelaysTheNextThroughItsFlow) {
  // Step 1 [0,20]: F1 [0,10] on lane 0, U1 [10,30] on lane 1 (after F1) spills over.
  // Step 2 [20,50]: F2 on lane 0 waits for U1: [31,41].
  Trace t;
  t.activities = {activity("F1", 0, 0, 10), activity("U1", 1, 10, 30), activity("F2", 0, 31, 41)};
  t.flows = {event(0, 10, 1, 10), event(1, 30, 0, 31)};
  for (auto [s, e] : {std::pair<int64_t, int64_t>{0, 20}, {20, 50}}) {
    Range r;
    r.name = "train_step";
    r.category = RangeCategory::iteration;
    r.start_ns = s;
    r.end_ns = e;
    t.ranges.push_back(r);
  }
  sort_by_start(t);
  const TraceAnalysis analysis = analyze(t);
  ASSERT_EQ(analysis.steps.size(), 2u);
  EXPECT_EQ(analysis.steps[0].nodes.size(), 2u);  // U1 stays with the step that submitted it
  // U1 twice as long (+20): F2 [51,61]; step 2's end moves by 20, its start does not.
  auto slow = scaled_durations(t, analysis.graph, recorded_durations(analysis.graph), {{"U?", 2}});
  const Prediction p = predict(t, analysis, slow);
  EXPECT_EQ(p.predicted.step_ns[0], 20);
  EXPECT_EQ(p.predicted.step_ns[1], 50);
}

TEST(WhatIfTest, ParsesScalesAndRefusesMalformedOnesSayingWhy) {
  const DurationScale s = parse_duration_scale("direct.*=x0.5");
  EXPECT_EQ(s.pattern, "direct.*");
  EXPECT_DOUBLE_EQ(s.factor, 0.5);
  EXPECT_DOUBLE_EQ(parse_duration_scale("a=b=X2").factor, 2);  // the last '=' splits
  EXPECT_EQ(parse_duration_scale("a=b=X2").pattern, "a=b");
  for (const char* bad : {"direct.*", "=x2", "conv=0.5", "conv=x", "conv=x0", "conv=x-1",
                          "conv=xnan", "conv=x1e9", "conv=x2ms"}) {
    EXPECT_THROW(parse_duration_scale(bad), std::invalid_argument) << bad;
  }
  try {
    parse_duration_scale("conv=0.5");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("xF"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(glob_match("direct.*", "direct.fwd"));
  EXPECT_TRUE(glob_match("*fwd*", "gemm.fwd.im2col"));
  EXPECT_TRUE(glob_match("a?c", "abc"));
  EXPECT_FALSE(glob_match("direct.*", "gemm.fwd"));
  EXPECT_FALSE(glob_match("a?c", "ac"));
}

TEST(WhatIfTest, SubstitutionTakesEachLayerAndPassTimeFromTheOtherTrace) {
  // Mine: conv1's forward is a pad kernel and direct.fwd; theirs: gemm.fwd.im2col and
  // gemm.fwd.gemm (6 in all per step, against direct's 10), no pad: pad drops out.
  const auto with_ranges = [](std::vector<Activity> activities, int64_t end) {
    Trace t;
    t.activities = std::move(activities);
    Range layer, phase, step;
    step.name = "train_step", step.category = RangeCategory::iteration, step.start_ns = 0,
    step.end_ns = end;
    phase.name = "forward", phase.category = RangeCategory::phase, phase.start_ns = 0,
    phase.end_ns = end;
    layer.name = "conv1", layer.category = RangeCategory::layer, layer.start_ns = 0,
    layer.end_ns = end;
    t.ranges = {step, phase, layer};
    sort_by_start(t);
    return t;
  };
  const Trace mine = with_ranges({activity("pad", 0, 0, 4), activity("direct.fwd", 0, 4, 14)}, 20);
  const Trace theirs =
      with_ranges({activity("gemm.fwd.im2col", 0, 0, 2), activity("gemm.fwd.gemm", 0, 2, 6)}, 10);
  const DependencyGraph g = build_dependency_graph(mine), og = build_dependency_graph(theirs);
  const Substitution s =
      substituted_durations(mine, g, find_steps(mine, g), theirs, og, find_steps(theirs, og));
  EXPECT_EQ(s.keys_replaced, 2u);
  EXPECT_EQ(s.durations, (std::vector<int64_t>{0, 6}));
  // What was replaced, per step: the forward 10 -> their 6; the pad 4 -> nothing.
  ASSERT_EQ(s.changes.size(), 2u);
  EXPECT_EQ(s.changes[0].key, (WorkKey{"conv1", "fwd"}));
  EXPECT_DOUBLE_EQ(s.changes[0].here_ns, 10);
  EXPECT_DOUBLE_EQ(s.changes[0].other_ns, 6);
  EXPECT_DOUBLE_EQ(s.changes[0].environment, 1);
  EXPECT_DOUBLE_EQ(s.changes[0].replaced_ns, 6);
  EXPECT_EQ(s.changes[1].key, (WorkKey{"conv1", "pad"}));
  EXPECT_DOUBLE_EQ(s.changes[1].here_ns, 4);
  EXPECT_DOUBLE_EQ(s.changes[1].replaced_ns, 0);
}

TEST(WhatIfTest, SubstitutionCountsTheHandOffsBetweenTheOthersKernelsOfOneLayerAndPass) {
  // Theirs runs conv1's forward as im2col [0, 2] and gemm [5, 9] on one lane: 6 busy and
  // a hand-off of 3 between them. Mine runs one direct.fwd of 10, which becomes 9.
  const auto one_layer = [](std::vector<Activity> activities) {
    Trace t;
    t.activities = std::move(activities);
    Range step, layer;
    step.name = "train_step", step.category = RangeCategory::iteration, step.start_ns = 0,
    step.end_ns = 20;
    layer.name = "conv1", layer.category = RangeCategory::layer, layer.start_ns = 0,
    layer.end_ns = 19;
    t.ranges = {step, layer};
    sort_by_start(t);
    return t;
  };
  const Trace mine = one_layer({activity("direct.fwd", 0, 0, 10)});
  const Trace theirs =
      one_layer({activity("gemm.fwd.im2col", 0, 0, 2), activity("gemm.fwd.gemm", 0, 5, 9)});
  const DependencyGraph g = build_dependency_graph(mine), og = build_dependency_graph(theirs);
  const Substitution s =
      substituted_durations(mine, g, find_steps(mine, g), theirs, og, find_steps(theirs, og));
  EXPECT_EQ(s.durations, (std::vector<int64_t>{9}));
  ASSERT_EQ(s.changes.size(), 1u);
  EXPECT_DOUBLE_EQ(s.changes[0].other_ns, 9);  // 6 busy and the hand-off of 3
  EXPECT_DOUBLE_EQ(s.changes[0].replaced_ns, 9);
  // And back: mine keeps its own hand-off of 3, so its two kernels take 10 - 3 = 7 in
  // all, in proportion (2 : 4 -> 2.33 : 4.67, rounded).
  const Substitution back =
      substituted_durations(theirs, og, find_steps(theirs, og), mine, g, find_steps(mine, g));
  EXPECT_EQ(back.durations, (std::vector<int64_t>{2, 5}));
}

TEST(WhatIfTest, SubstitutionTakesTheMedianStepSoOnePreemptedStepDoesNotMoveIt) {
  // Three steps of 10 each; mine runs direct.fwd for 8 in each, theirs gemm.fwd for 4, 4
  // and, in a preempted step, 9. The median per step is 4 (the mean would be 5.67): each
  // direct.fwd becomes 8 * 4 / 8 = 4.
  const auto three_steps = [](const char* name, std::vector<int64_t> lengths) {
    Trace t;
    for (size_t s = 0; s < lengths.size(); ++s) {
      const int64_t at = static_cast<int64_t>(s) * 10;
      t.activities.push_back(activity(name, 0, at, at + lengths[s]));
      Range step, layer;
      step.name = "train_step", step.category = RangeCategory::iteration, step.start_ns = at,
      step.end_ns = at + 10;
      layer.name = "conv1", layer.category = RangeCategory::layer, layer.start_ns = at,
      layer.end_ns = at + 9;
      t.ranges.push_back(step);
      t.ranges.push_back(layer);
    }
    sort_by_start(t);
    return t;
  };
  const Trace mine = three_steps("direct.fwd", {8, 8, 8});
  const Trace theirs = three_steps("gemm.fwd", {4, 9, 4});
  const DependencyGraph g = build_dependency_graph(mine), og = build_dependency_graph(theirs);
  const Substitution s =
      substituted_durations(mine, g, find_steps(mine, g), theirs, og, find_steps(theirs, og));
  EXPECT_EQ(s.keys_replaced, 1u);
  EXPECT_EQ(s.durations, (std::vector<int64_t>{4, 4, 4}));
}

TEST(WhatIfTest, SubstitutionKeepsTheSameWorkAndScalesTheOthersTimesToThisEnvironment) {
  // Both run relu.fwd in layer relu1: 10 here, 5 there (the other run had the cores to
  // itself), so the other's times are x2 here. conv1 changes from direct.fwd (8) to
  // gemm.fwd (3 there): 3 * 2 = 6 here; relu.fwd keeps its own 10.
  const auto two_layers = [](const char* conv, int64_t conv_ns, int64_t relu_ns) {
    Trace t;
    t.activities = {activity(conv, 0, 0, conv_ns), activity("relu.fwd", 0, 20, 20 + relu_ns)};
    Range step, conv1, relu1;
    step.name = "train_step", step.category = RangeCategory::iteration, step.start_ns = 0,
    step.end_ns = 40;
    conv1.name = "conv1", conv1.category = RangeCategory::layer, conv1.start_ns = 0,
    conv1.end_ns = 19;
    relu1.name = "relu1", relu1.category = RangeCategory::layer, relu1.start_ns = 20,
    relu1.end_ns = 39;
    t.ranges = {step, conv1, relu1};
    sort_by_start(t);
    return t;
  };
  const Trace mine = two_layers("direct.fwd", 8, 10);
  const Trace theirs = two_layers("gemm.fwd", 3, 5);
  const DependencyGraph g = build_dependency_graph(mine), og = build_dependency_graph(theirs);
  const Substitution s =
      substituted_durations(mine, g, find_steps(mine, g), theirs, og, find_steps(theirs, og));
  EXPECT_EQ(s.keys_replaced, 1u);
  EXPECT_EQ(s.keys_same, 1u);
  EXPECT_DOUBLE_EQ(s.calibration, 2.0);
  EXPECT_EQ(s.durations, (std::vector<int64_t>{6, 10}));
}

TEST(WhatIfTest, OneKindOfWorkSlowedFarMoreThanTheRestDoesNotScaleTheOthersTimes) {
  // The same work in three layers: relu1 and fc1 take 1.1x their time there, pool1 7x (a
  // kernel slowed by one state of the machine the conv kernels did not feel). The
  // environment is what most of the time says, 1.1 (the weighted median), not the ratio
  // of the sums (103 : 40 = 2.58); conv1's gemm.fwd (10 there) takes 11 here.
  const auto layer = [](const char* name, int64_t start, int64_t end) {
    Range r;
    r.name = name, r.category = RangeCategory::layer, r.start_ns = start, r.end_ns = end;
    return r;
  };
  const auto run = [&](const char* conv, int64_t relu_ns, int64_t pool_ns, int64_t fc_ns) {
    Trace t;
    t.activities = {activity(conv, 0, 0, 10), activity("relu.fwd", 0, 20, 20 + relu_ns),
                    activity("pool.fwd", 0, 40, 40 + pool_ns),
                    activity("fc.fwd", 0, 120, 120 + fc_ns)};
    Range step;
    step.name = "train_step", step.category = RangeCategory::iteration, step.start_ns = 0,
    step.end_ns = 200;
    t.ranges = {step, layer("conv1", 0, 19), layer("relu1", 20, 39), layer("pool1", 40, 119),
                layer("fc1", 120, 199)};
    sort_by_start(t);
    return t;
  };
  const Trace mine = run("direct.fwd", 11, 70, 22);
  const Trace theirs = run("gemm.fwd", 10, 10, 20);
  const DependencyGraph g = build_dependency_graph(mine), og = build_dependency_graph(theirs);
  const Substitution s =
      substituted_durations(mine, g, find_steps(mine, g), theirs, og, find_steps(theirs, og));
  EXPECT_EQ(s.keys_same, 3u);
  EXPECT_NEAR(s.calibration, 1.1, 1e-12);
  EXPECT_EQ(s.durations, (std::vector<int64_t>{11, 11, 70, 22}));
}

TEST(WhatIfTest, SubstitutionScalesTheOthersTimesByTheOverlapEachKeyHadThereAndHasHere) {
  // Mine runs one lane: conv1 direct.fwd 8, relu1 relu.fwd 10, pool1 pool.fwd 10. Theirs
  // runs a second lane whose kernels overlap its gemm.fwd (6) and pool.fwd (15) fully but
  // not its relu.fwd (10). The same work says: alone, the same time (relu 10 : 10);
  // overlapped all along, x1.5 (pool 15 : 10). So calibration 1, slowdown 0.5, and
  // gemm.fwd, overlapped there and alone here, takes 6 / 1.5 = 4. One flat ratio of the
  // same work (20 : 25) would give 6 x 0.8 = 4.8.
  const auto layer = [](const char* name, int lane, int64_t start, int64_t end) {
    Range r;
    r.name = name, r.category = RangeCategory::layer, r.lane = lane, r.start_ns = start,
    r.end_ns = end;
    return r;
  };
  Range step;
  step.name = "train_step", step.category = RangeCategory::iteration, step.start_ns = 0,
  step.end_ns = 40;
  Trace mine;
  mine.activities = {activity("direct.fwd", 0, 0, 8), activity("relu.fwd", 0, 10, 20),
                     activity("pool.fwd", 0, 20, 30)};
  mine.ranges = {step, layer("conv1", 0, 0, 9), layer("relu1", 0, 10, 20),
                 layer("pool1", 0, 20, 30)};
  sort_by_start(mine);
  Trace theirs;
  theirs.activities = {activity("gemm.fwd", 0, 0, 6), activity("side.k", 1, 0, 6),
                       activity("relu.fwd", 0, 10, 20), activity("pool.fwd", 0, 20, 35),
                       activity("side.k", 1, 20, 35)};
  theirs.ranges = {step, layer("conv1", 0, 0, 9), layer("relu1", 0, 10, 20),
                   layer("pool1", 0, 20, 35), layer("side", 1, 0, 36)};
  theirs.flows = {Flow{FlowKind::event, {0, 0, 6}, {0, 1, 20}}};
  sort_by_start(theirs);
  const DependencyGraph g = build_dependency_graph(mine), og = build_dependency_graph(theirs);
  const Substitution s =
      substituted_durations(mine, g, find_steps(mine, g), theirs, og, find_steps(theirs, og));
  EXPECT_EQ(s.keys_same, 2u);
  EXPECT_NEAR(s.calibration, 1.0, 1e-12);
  EXPECT_NEAR(s.overlap_slowdown, 0.5, 1e-12);
  EXPECT_EQ(s.durations, (std::vector<int64_t>{4, 10, 10}));
}

TEST(WhatIfTest, SubstitutionOfSomeLayersMixesTwoRuns) {
  // Two conv layers, both direct here and gemm there: with layers {"conv2"} only conv2
  // takes the other's time (3 for 8); conv1 keeps its 7. relu1, the same in both (4
  // here, 4 there), calibrates x1.
  const auto three_layers = [](const char* conv, int64_t conv1_ns, int64_t conv2_ns) {
    Trace t;
    t.activities = {activity(conv, 0, 0, conv1_ns), activity(conv, 0, 10, 10 + conv2_ns),
                    activity("relu.fwd", 0, 20, 24)};
    Range step;
    step.name = "train_step", step.category = RangeCategory::iteration, step.start_ns = 0,
    step.end_ns = 30;
    t.ranges = {step};
    const char* names[] = {"conv1", "conv2", "relu1"};
    for (int l = 0; l < 3; ++l) {
      Range layer;
      layer.name = names[l], layer.category = RangeCategory::layer, layer.start_ns = 10 * l,
      layer.end_ns = 10 * l + 9;
      t.ranges.push_back(layer);
    }
    sort_by_start(t);
    return t;
  };
  const Trace mine = three_layers("direct.fwd", 7, 8);
  const Trace theirs = three_layers("gemm.fwd", 2, 3);
  const DependencyGraph g = build_dependency_graph(mine), og = build_dependency_graph(theirs);
  const Substitution s = substituted_durations(mine, g, find_steps(mine, g), theirs, og,
                                               find_steps(theirs, og), {"conv2"});
  EXPECT_EQ(s.keys_replaced, 1u);
  EXPECT_DOUBLE_EQ(s.calibration, 1.0);
  EXPECT_EQ(s.durations, (std::vector<int64_t>{7, 3, 4}));
  EXPECT_EQ(layer_names(mine), (std::vector<std::string>{"conv1", "conv2", "relu1"}));
}

TEST(ReplayTest, TypicalDurationsReplayEachStepWithTheMedianOfItsWork) {
  EXPECT_EQ(typical_durations({8, 8, 20, 5}, {0, 0, 0, 1}), (std::vector<int64_t>{8, 8, 8, 5}));
  // Steps [0,10], [10,20], [20,40]: k runs 8 in the first two, 18 in the third (preempted),
  // and the host ends each step 2 after it. With typical durations the third k runs 8,
  // so its step ends 30 - 20 = 10 after it starts: every step is 10.
  Trace t;
  const int64_t starts[] = {0, 10, 20}, ends[] = {10, 20, 40};
  for (int s = 0; s < 3; ++s) {
    t.activities.push_back(activity("k", 0, starts[s], ends[s] - 2));
    Range step;
    step.name = "train_step", step.category = RangeCategory::iteration;
    step.start_ns = starts[s], step.end_ns = ends[s];
    t.ranges.push_back(step);
  }
  sort_by_start(t);
  const TraceAnalysis a = analyze(t);
  EXPECT_EQ(a.recorded.step_ns, (std::vector<int64_t>{10, 10, 20}));
  const Prediction p =
      predict(t, a, recorded_durations(a.graph), Latency::recorded, Durations::typical);
  EXPECT_EQ(p.predicted.step_ns, (std::vector<int64_t>{10, 10, 10}));
  EXPECT_EQ(predict(t, a, recorded_durations(a.graph)).predicted.step_ns, a.recorded.step_ns);
}

}  // namespace
}  // namespace tunescope::profiler::analysis
