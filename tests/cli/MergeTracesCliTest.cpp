// `tunescope merge-traces`: the ranks' own traces in, one trace of all ranks out (read
// back with both ranks on rank 0's clock and the clocks reported); a missing, corrupt,
// duplicate or foreign-world input exits 2 naming the file.
#include <gtest/gtest.h>

#include <fstream>

#include "profiler/ChromeTraceWriter.h"
#include "profiler/RankMerge.h"
#include "profiler/TraceFiles.h"
#include "tests/cli/RunCli.h"
#include "tests/cli/TestFolder.h"

namespace tunescope {
namespace {

using test_support::run_cli;
using test_support::ScratchDir;

// Rank `rank` of a world of `world`: an all-reduce at local time 1000 + offset; rank 1
// also computes for 500 ns before it.
std::string write_rank(const ScratchDir& dir, const std::string& name, int rank, int world,
                       int64_t offset) {
  profiler::Trace t;
  t.metadata.backend = "cpu";
  t.metadata.extra[profiler::kRankKey] = std::to_string(rank);
  t.metadata.extra[profiler::kWorldSizeKey] = std::to_string(world);
  t.metadata.extra[profiler::kClockOffsetKey] = std::to_string(offset);
  t.metadata.extra[profiler::kClockUncertaintyKey] = "500";
  profiler::Activity a;
  a.name = "allreduce.bucket0";
  a.start_ns = 1000 + offset;
  a.end_ns = 2000 + offset;
  t.activities.push_back(a);
  if (rank == 1) {
    a.name = "conv.fwd";
    a.start_ns = 500 + offset;
    a.end_ns = 1000 + offset;
    t.activities.push_back(a);
  }
  profiler::ChromeTraceWriter().write(t, dir / name);
  return dir.at(name);
}

TEST(MergeTracesCli, MergesRanksOntoRankZerosClock) {
  ScratchDir dir;
  const std::string r0 = write_rank(dir, "t.rank0.json", 0, 2, 0);
  const std::string r1 = write_rank(dir, "t.rank1.json", 1, 2, 7000);
  const auto r = run_cli("merge-traces " + dir.at("merged.json") + " " + r1 + " " + r0);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("rank 1: +7.00 us +/- 0.50 us"), std::string::npos) << r.output;
  const profiler::Trace merged = profiler::read_trace_file(dir / "merged.json");
  ASSERT_EQ(merged.activities.size(), 3u);
  for (const profiler::Activity& a : merged.activities)
    EXPECT_EQ(a.start_ns, a.name == "conv.fwd" ? 500 : 1000);
  EXPECT_EQ(profiler::ranks_of(merged), (std::vector<int>{0, 1}));

  const auto report = run_cli("report " + dir.at("merged.json"));
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("straggler: rank 1, 0.001 ms more compute than rank 0"),
            std::string::npos)
      << report.output;
  EXPECT_NE(report.output.find("communication: 0.002 ms, 0.0% hidden"), std::string::npos)
      << report.output;
}

TEST(MergeTracesCli, BadInputsExitTwoNamingTheFile) {
  ScratchDir dir;
  const std::string r0 = write_rank(dir, "t.rank0.json", 0, 2, 0);
  const std::string again = write_rank(dir, "again.json", 0, 2, 0);
  const std::string other = write_rank(dir, "other.json", 1, 4, 0);
  std::ofstream(dir / "broken.json") << "{\"traceEvents\":[{\"ph\":\"X\"";
  struct Case {
    std::string inputs;
    std::vector<std::string> fragments;
  };
  const Case cases[] = {
      {r0 + " " + dir.at("missing.json"), {"missing.json"}},
      {r0 + " " + dir.at("broken.json"), {"broken.json"}},
      {r0 + " " + again, {"again.json", "rank 0 again", "t.rank0.json"}},
      {r0 + " " + other, {"other.json", "world_size 4", "world_size 2"}},
  };
  for (const Case& c : cases) {
    const auto r = run_cli("merge-traces " + dir.at("out.json") + " " + c.inputs);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    for (const std::string& fragment : c.fragments)
      EXPECT_NE(r.output.find(fragment), std::string::npos) << fragment << " not in " << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out.json"));
}

}  // namespace
}  // namespace tunescope
