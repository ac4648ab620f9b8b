// Edges rebuilt from foreign traces: PyTorch's Kineto form (launch correlations plus
// stream order), PyTorch's legacy CPU form (thread order only), an nsys-shaped export
// (runtime correlation ids), and our own flows read back from every format.
#include <gtest/gtest.h>

#include "profiler/ChromeTraceReader.h"
#include "profiler/TraceFiles.h"
#include "profiler/analysis/DependencyGraph.h"
#include "profiler/analysis/StepAnalysis.h"
#include "tests/profiler/TraceTestFiles.h"

namespace tunescope::profiler::analysis {
namespace {

const std::filesystem::path kData = std::filesystem::path(TUNESCOPE_TEST_DATA_DIR) / "pytorch";

TEST(ForeignTraceEdgesTest, KinetoLaunchesLinkToWhatTheyLaunched) {
  const Trace t = read_chrome_trace(kData / "kineto-cuda-handmade.json");
  const DependencyGraph g = build_dependency_graph(t);
  // cudaLaunchKernel -> the conv kernel (901), cudaMemcpyAsync -> the copy (902).
  EXPECT_EQ(g.launch_edges, 2u);
  for (size_t n = 0; n < g.size(); ++n) {
    for (const Edge& e : g.predecessors[n]) {
      if (e.kind == EdgeKind::launch) {
        EXPECT_EQ(t.activities[g.activity[e.from]].correlation,
                  t.activities[g.activity[n]].correlation);
      }
    }
  }
  const TraceAnalysis a = analyze(t);
  ASSERT_EQ(a.steps.size(), 1u);
  EXPECT_EQ(a.steps[0].name, "ProfilerStep#5");
}

TEST(ForeignTraceEdgesTest, LegacyCpuTraceIsOrderedByItsThreads) {
  const Trace t = read_chrome_trace(kData / "lenet5-cpu-torch1.13-legacy.json");
  const TraceAnalysis a = analyze(t);
  EXPECT_GT(a.graph.size(), 0u);
  EXPECT_EQ(a.graph.cross_lane_edges(), 0u);
  // With thread order the only dependency, a replay of the recorded times is exact.
  const Prediction p = predict(t, a, recorded_durations(a.graph));
  EXPECT_EQ(p.replay_check.median_step_ns, a.recorded.median_step_ns);
  int64_t total = 0;
  for (int64_t ns : a.recorded.bound_ns) total += ns;
  EXPECT_EQ(total, a.recorded.step_ns[0]);  // the breakdown accounts for the step
}

TEST(ForeignTraceEdgesTest, OurFlowsSurviveEveryFormatAsEdges) {
  test_files::ScratchDir dir;
  const Trace sample = test_files::sample_trace();
  const size_t bound = build_dependency_graph(sample).flows_bound;
  for (TraceFormat format : {TraceFormat::chrome, TraceFormat::kineto, TraceFormat::nsys_sqlite}) {
    SCOPED_TRACE(to_string(format));
    const auto path = dir / ("flows." + to_string(format));
    make_trace_writer(format)->write(sample, path);
    const Trace back = read_trace_file(path);
    EXPECT_EQ(back.flows.size(), sample.flows.size());
    EXPECT_EQ(build_dependency_graph(back).flows_bound, bound);
  }
}

}  // namespace
}  // namespace tunescope::profiler::analysis
