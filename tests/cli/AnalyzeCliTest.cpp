// `tunescope analyze`: a profiled two-lane run analysed and replayed (the replay of the
// recorded times equals the recording; a what-if that slows every kernel predicts a
// longer step), and bad input refused with exit status 2 and a message naming it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "profiler/CoreDistanceProbes.h"
#include "profiler/Metrics.h"
#include "profiler/RankMerge.h"
#include "profiler/Roofline.h"
#include "profiler/TraceFiles.h"
#include "tests/cli/RunCli.h"
#include "tests/cli/TestFolder.h"

namespace tunescope {
namespace {

using test_support::run_cli;

const char* kRun =
    "profile --warmup 1 --steps 3 --streams 2 --async-update --data fake --fake-count 64 --batch "
    "16 "
    "--threads 2 --test-limit 16 --trace ";

TEST(AnalyzeCli, ReplaysATwoLaneRunAndPredictsAWhatIf) {
  test_support::ScratchDir dir;
  const auto trace = dir / "run.json";
  const auto made = run_cli(kRun + trace.string());
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_FALSE(profiler::read_trace_file(trace).flows.empty());

  const auto r = run_cli("analyze " + trace.string() + " --what-if '*=x2' --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto out = nlohmann::json::parse(r.output);
  EXPECT_EQ(out["steps"], 3);
  EXPECT_GT(out["graph"]["flows_bound"].get<int>(), 0);
  EXPECT_EQ(out["graph"]["flows_unbound"], 0);
  const double step = out["median_step_ms"];
  EXPECT_DOUBLE_EQ(out["what_if"]["replay_check_median_step_ms"].get<double>(), step);
  // Every activity twice as long: the step grows, by at most the whole step.
  const double predicted = out["what_if"]["predicted_median_step_ms"];
  EXPECT_GT(predicted, step);
  EXPECT_LE(predicted, 2 * step);
  double parts = 0;
  for (const auto& [bound, ms] : out["critical_path"].items()) parts += ms.get<double>();
  EXPECT_GT(parts, 0);

  const auto text = run_cli("analyze " + trace.string());
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("critical path, summed over the steps"), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("idle time by lane"), std::string::npos) << text.output;
}

TEST(AnalyzeCli, AMergedTraceIsAnalysedRankByRankWithTheStraggler) {
  // Two real profiles merged as ranks 0 and 1 (as rank 0 of an MPI run does): each rank
  // keeps its own 3 steps and 2 lanes instead of one analysis of both ranks' lanes mixed.
  test_support::ScratchDir dir;
  std::vector<profiler::RankInput> inputs;
  for (int rank : {0, 1}) {
    const auto path = dir / ("rank" + std::to_string(rank) + ".json");
    const auto made = run_cli(kRun + path.string());
    ASSERT_EQ(made.exit_code, 0) << made.output;
    profiler::Trace t = profiler::read_trace_file(path);
    t.metadata.extra[profiler::kRankKey] = std::to_string(rank);
    t.metadata.extra[profiler::kWorldSizeKey] = "2";
    inputs.push_back({path.string(), std::move(t)});
  }
  const profiler::Trace merged = profiler::merge_rank_traces(std::move(inputs));
  const auto merged_path = dir / "merged.json";
  profiler::make_trace_writer(profiler::TraceFormat::chrome)->write(merged, merged_path);

  const auto r = run_cli("analyze " + merged_path.string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto out = nlohmann::json::parse(r.output);
  ASSERT_EQ(out["ranks"].size(), 2u);
  for (int rank : {0, 1}) {
    const auto& one = out["ranks"][static_cast<size_t>(rank)];
    EXPECT_EQ(one["rank"], rank);
    EXPECT_EQ(one["steps"], 3);
    EXPECT_EQ(one["graph"]["lanes"], 2);
    EXPECT_EQ(one["graph"]["flows_unbound"], 0);
  }
  // The report's definition of the straggler: the rank with more compute.
  const profiler::RankBalance balance = profiler::rank_balance(merged);
  EXPECT_EQ(out["straggler"]["rank"], balance.straggler);

  const auto text = run_cli("analyze " + merged_path.string());
  ASSERT_EQ(text.exit_code, 0) << text.output;
  for (const char* part : {"(2 ranks, each analysed on its own)", "=== rank 0 ===",
                           "=== rank 1 ===", "ranks, side by side", "straggler: rank "})
    EXPECT_NE(text.output.find(part), std::string::npos) << part << "\n" << text.output;
}

TEST(AnalyzeCli, TheRooflineRuleReadsTheMachinePeakFromTheResultsDb) {
  test_support::ScratchDir dir;
  const auto trace = dir / "run.json";
  ASSERT_EQ(run_cli(kRun + trace.string()).exit_code, 0);
  auto r = run_cli("analyze " + trace.string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto out = nlohmann::json::parse(r.output);
  EXPECT_FALSE(out.contains("machine_peak"));
  EXPECT_NE(out["roofline_rule_off"].get<std::string>().find("--db"), std::string::npos);

  // The peak of the CPU and threads the trace's kernels ran on, measured into a DB.
  const auto meta = profiler::read_trace_file(trace).metadata.extra;
  ASSERT_TRUE(meta.count(profiler::kKernelThreadsKey));
  const auto db = dir / "results.sqlite";
  const auto machine = run_cli("machine --seconds 0.2 --threads " +
                               meta.at(profiler::kKernelThreadsKey) + " --db " + db.string());
  ASSERT_EQ(machine.exit_code, 0) << machine.output;
  r = run_cli("analyze " + trace.string() + " --json --db " + db.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  out = nlohmann::json::parse(r.output);
  ASSERT_TRUE(out.contains("machine_peak")) << r.output;
  EXPECT_GT(out["machine_peak"]["fma_gflops"].get<double>(), 0);
  for (const auto& f : out["findings"]) {
    if (f["rule"] == "below-roofline") {
      EXPECT_FALSE(f["evidence"].empty());
    }
  }

  r = run_cli("analyze " + trace.string() + " --db " + (dir / "missing.sqlite").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("missing.sqlite"), std::string::npos) << r.output;
}

TEST(AnalyzeCli, BadInputExitsTwoSayingWhatIsWrong) {
  test_support::ScratchDir dir;
  const auto trace = dir / "run.json";
  ASSERT_EQ(run_cli(kRun + trace.string()).exit_code, 0);

  auto r = run_cli("analyze " + trace.string() + " --what-if 'direct.*=0.5'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--what-if"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("xF"), std::string::npos) << r.output;
  r = run_cli("analyze " + trace.string() + " --what-if 'direct.*=x-1'");
  EXPECT_EQ(r.exit_code, 2) << r.output;

  // The same run without its flows: two lanes and nothing linking them.
  profiler::Trace stripped = profiler::read_trace_file(trace);
  stripped.flows.clear();
  const auto no_edges = dir / "no-edges.json";
  profiler::make_trace_writer(profiler::TraceFormat::chrome)->write(stripped, no_edges);
  r = run_cli("analyze " + no_edges.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(no_edges.string()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no dependencies between its 2 lanes"), std::string::npos) << r.output;

  r = run_cli("analyze " + (dir / "missing.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;

  // --what-if-layers: only with --what-if-times, and every glob names a layer of the trace.
  r = run_cli("analyze " + trace.string() + " --what-if-layers conv1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("needs --what-if-times"), std::string::npos) << r.output;
  r = run_cli("analyze " + trace.string() + " --what-if-times " + trace.string() +
              " --what-if-layers conv9");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("'conv9' matches no layer of " + trace.string()), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("conv1"), std::string::npos) << r.output;
}

TEST(AnalyzeCli, WhatIfTimesOfOneLayerPredictsTheMixOfTwoRuns) {
  // A run's own times for conv1 predict the run itself; the JSON names the layers taken.
  test_support::ScratchDir dir;
  const auto trace = dir / "run.json";
  ASSERT_EQ(run_cli(kRun + trace.string()).exit_code, 0);
  const auto r = run_cli("analyze " + trace.string() + " --what-if-times " + trace.string() +
                         " --what-if-layers 'conv1' --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto out = nlohmann::json::parse(r.output);
  EXPECT_EQ(out["what_if"]["layers"], nlohmann::json::array({"conv1"}));
  // The same activities in both: nothing replaced, every kind kept, calibration 1.
  EXPECT_EQ(out["what_if"]["work_kinds_replaced"], 0);
  EXPECT_TRUE(out["what_if"]["work_replaced"].empty());
  EXPECT_GT(out["what_if"]["work_kinds_kept"].get<int>(), 0);
  EXPECT_DOUBLE_EQ(out["what_if"]["environment_calibration"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(out["what_if"]["predicted_median_step_ms"].get<double>(),
                   out["median_step_ms"].get<double>());
}

// A two-thread profile keeps where the host had the CPUs (the core-distance watch) in its
// trace; analyze shows it, and a what-if from a trace taken with the CPUs in another state
// (here the same trace, its probes rewritten as far apart) says the prediction crosses it.
TEST(AnalyzeCli, WhatIfTimesFromAnotherCoreStateIsFlagged) {
  test_support::ScratchDir dir;
  const auto trace = dir / "run.json";
  const auto made = run_cli(kRun + trace.string());
  ASSERT_EQ(made.exit_code, 0) << made.output;
  profiler::Trace run = profiler::read_trace_file(trace);
  const auto cores = profiler::core_distance_of(run);
  if (!cores) GTEST_SKIP() << "one CPU allowed: a two-thread run shares no cache line";
  EXPECT_NE(made.output.find("cores: a cache line went from CPU"), std::string::npos)
      << made.output;

  const auto same =
      run_cli("analyze " + trace.string() + " --what-if-times " + trace.string() + " --json");
  ASSERT_EQ(same.exit_code, 0) << same.output;
  const auto same_out = nlohmann::json::parse(same.output);
  EXPECT_EQ(same_out["core_distance"]["cpus"], nlohmann::json::array({cores->cpu_a, cores->cpu_b}));
  // Against itself the states differ only where the run's own watch saw the host move
  // the CPUs (its start and end probes 1.8x apart or more: both states in one run).
  EXPECT_EQ(same_out["what_if"]["core_states_differ"], cores->moved());

  profiler::CoreDistanceWatch far = *cores;
  far.start_ns = far.end_ns = 10 * std::max(cores->start_ns, cores->end_ns);
  run.metadata.extra[profiler::kCoreDistanceKey] = profiler::core_distance_to_text(far);
  const auto far_trace = dir / "far.json";
  profiler::make_trace_writer(profiler::TraceFormat::chrome)->write(run, far_trace);
  const auto crossed =
      run_cli("analyze " + trace.string() + " --what-if-times " + far_trace.string() + " --json");
  ASSERT_EQ(crossed.exit_code, 0) << crossed.output;
  const auto crossed_out = nlohmann::json::parse(crossed.output);
  EXPECT_EQ(crossed_out["what_if"]["core_states_differ"], true);
  EXPECT_DOUBLE_EQ(crossed_out["what_if"]["other_core_distance"]["start_ns"].get<double>(),
                   std::round(far.start_ns));
  const auto text = run_cli("analyze " + trace.string() + " --what-if-times " + far_trace.string());
  EXPECT_NE(text.output.find("two machine states"), std::string::npos) << text.output;

  // A trace without the watch (one thread, or an older build's): no claim either way.
  run.metadata.extra.erase(profiler::kCoreDistanceKey);
  const auto bare_trace = dir / "bare.json";
  profiler::make_trace_writer(profiler::TraceFormat::chrome)->write(run, bare_trace);
  const auto bare =
      run_cli("analyze " + trace.string() + " --what-if-times " + bare_trace.string() + " --json");
  ASSERT_EQ(bare.exit_code, 0) << bare.output;
  EXPECT_TRUE(nlohmann::json::parse(bare.output)["what_if"]["core_states_differ"].is_null());
}

}  // namespace
}  // namespace tunescope
