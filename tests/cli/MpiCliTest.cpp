// Ranks over MPI, end to end: `mpirun -np 2 tunescope train` trains lenet5 with the same
// per-step losses as one process of the same global batch (and resnet18-small as one
// process of two replicas: batch norm is per shard), rank 0 alone prints, `profile
// --trace` writes one trace per rank with the rank metadata and the named all-reduce.
// The test launches mpirun itself, as root where CI runs (--allow-run-as-root) and with
// more ranks than cores (--oversubscribe). Without MPI in the build it checks that a
// multi-rank start says MPI is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "profiler/RankMerge.h"
#include "profiler/TraceFiles.h"
#include "tests/cli/RunCli.h"
#include "tests/cli/TestFolder.h"

namespace tunescope::test_support {
namespace {

// The global batch's loss at each step. Two ranks sum each batch's halves apart, so only
// float reassociation separates them from one process: 1e-4 relative covers it with a
// wide margin (measured: about 1e-7 over 10 lenet5 steps).
constexpr double kLossTolerance = 1e-4;
constexpr const char* kLenet =
    "--model lenet5 --data fake --fake-count 640 --test-limit 64 --batch 64 --threads 1";
constexpr const char* kResnet =
    "--model resnet18-small --data fake --fake-count 32 --test-limit 8 --batch 8 --threads 1";

#ifdef TUNESCOPE_MPIEXEC
CliResult run_ranks(int ranks, const std::string& args) {
  // OpenMPI refuses root without this; CI runs as root on 2 cores. `timeout` bounds a hang.
  return run_command("timeout 600 " + std::string(TUNESCOPE_MPIEXEC) +
                     " --allow-run-as-root --oversubscribe -np " + std::to_string(ranks) + " " +
                     TUNESCOPE_CLI_PATH + " " + args);
}

std::vector<double> read_losses(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<double> losses;
  long long epoch = 0, step = 0;
  double loss = 0;
  while (in >> epoch >> step >> loss) losses.push_back(loss);
  return losses;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

void expect_same_losses(const std::vector<double>& expected, const std::vector<double>& got) {
  ASSERT_FALSE(expected.empty());
  ASSERT_EQ(expected.size(), got.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], kLossTolerance * std::abs(expected[i])) << "step " << i + 1;
}

TEST(MpiCli, TwoRanksTrainLenetWithTheLossesOfOneProcess) {
  ScratchDir dir;
  const CliResult single =
      run_cli(std::string("train ") + kLenet + " --loss-log " + (dir.path() / "one.txt").string());
  ASSERT_EQ(single.exit_code, 0) << single.output;
  const CliResult ranks = run_ranks(
      2, std::string("train ") + kLenet + " --loss-log " + (dir.path() / "two.txt").string());
  ASSERT_EQ(ranks.exit_code, 0) << ranks.output;
  // Each rank trains on its own half of every batch: were the halves the same, or not
  // the single process's batch, the losses would differ from the first step on.
  const std::vector<double> one = read_losses(dir.path() / "one.txt");
  EXPECT_EQ(one.size(), 10u);
  expect_same_losses(one, read_losses(dir.path() / "two.txt"));
  EXPECT_EQ(count_of(ranks.output, "tunescope train:"), 1u) << ranks.output;  // rank 0 prints
  EXPECT_NE(ranks.output.find("2 ranks (32 examples each on rank 0)"), std::string::npos)
      << ranks.output;
  EXPECT_EQ(count_of(ranks.output, "test loss"), 1u) << ranks.output;
}

TEST(MpiCli, TwoRanksTrainResnetLikeTwoReplicasWithoutOverlapOrWithBuckets) {
  ScratchDir dir;
  const CliResult single = run_cli(std::string("train ") + kResnet + " --replicas 2 --loss-log " +
                                   (dir.path() / "one.txt").string());
  ASSERT_EQ(single.exit_code, 0) << single.output;
  const std::vector<double> one = read_losses(dir.path() / "one.txt");
  EXPECT_EQ(one.size(), 4u);
  for (const char* knobs : {"--allreduce-overlap=off", "--allreduce-bucket-kb 64"}) {
    const std::string log = (dir.path() / "two.txt").string();
    const CliResult ranks =
        run_ranks(2, std::string("train ") + kResnet + " " + knobs + " --loss-log " + log);
    ASSERT_EQ(ranks.exit_code, 0) << knobs << "\n" << ranks.output;
    SCOPED_TRACE(knobs);
    expect_same_losses(one, read_losses(log));
  }
}

TEST(MpiCli, ProfileWritesATracePerRankWithItsClockOffsetAndRankZeroMergesThem) {
  ScratchDir dir;
  const std::string trace = (dir.path() / "run.json").string();
  const CliResult ranks =
      run_ranks(2, std::string("profile ") + kLenet +
                       " --warmup 1 --steps 2 --allreduce-bucket-kb 0 --trace " + trace);
  ASSERT_EQ(ranks.exit_code, 0) << ranks.output;
  // Rank 0's merge: both ranks as processes on its clock, the all-reduce of each visible.
  ASSERT_TRUE(std::filesystem::exists(trace)) << ranks.output;
  const profiler::Trace merged = profiler::read_trace_file(trace);
  EXPECT_EQ(profiler::ranks_of(merged), (std::vector<int>{0, 1}));
  for (int r = 0; r < 2; ++r)
    EXPECT_TRUE(std::any_of(merged.activities.begin(), merged.activities.end(),
                            [&](const profiler::Activity& a) {
                              return a.rank == r && a.name.str().starts_with("allreduce.bucket");
                            }))
        << "rank " << r;
  EXPECT_EQ(profiler::rank_clocks(merged.metadata).size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const auto path = dir.path() / ("run.rank" + std::to_string(r) + ".json");
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    const std::string text = file_bytes(path);
    for (const std::string key :
         {"\"world_size\"", "\"clock_offset_ns\"", "\"clock_offset_uncertainty_ns\"",
          "allreduce.bucket0", "allreduce.bucket4"})
      EXPECT_NE(text.find(key), std::string::npos) << key << " missing in rank " << r;
    EXPECT_NE(text.find("\"rank\":\"" + std::to_string(r) + "\""), std::string::npos)
        << "rank " << r;
  }
}

// A distributed tune: 4 candidates over 2 ranks, each measured exactly once by one of
// them, every trial in rank 0's DB, and rank 0 settling the leaders from them.
TEST(MpiCli, TuneSpreadsTheCandidatesOverTheRanksAndGathersThemIntoRankZerosDb) {
  ScratchDir dir;
  const std::string db = (dir.path() / "tune.db").string();
  const CliResult ranks =
      run_ranks(2,
                "tune --model lenet5 --data fake --fake-count 256 --batch 16 --layouts nchw,nhwc "
                "--algorithms direct,gemm --threads-list 1 --steps 3 --max-timing-seconds 1 --db " +
                    db + " --out " + (dir.path() / "tuned.json").string());
  ASSERT_EQ(ranks.exit_code, 0) << ranks.output;
  for (const char* config : {"nchw conv=direct threads=1:", "nchw conv=gemm threads=1:",
                             "nhwc conv=direct threads=1:", "nhwc conv=gemm threads=1:"})
    EXPECT_EQ(count_of(ranks.output, std::string(": ") + config), 1u)
        << config << " measured other than once\n"
        << ranks.output;
  // Each rank starts at a position of its own, then takes the next one free.
  EXPECT_GE(count_of(ranks.output, "  rank 0: "), 1u) << ranks.output;
  EXPECT_GE(count_of(ranks.output, "  rank 1: "), 1u) << ranks.output;
  EXPECT_EQ(count_of(ranks.output, "  rank 0: ") + count_of(ranks.output, "  rank 1: "), 4u)
      << ranks.output;
  EXPECT_NE(ranks.output.find("4 trials reused from"), std::string::npos) << ranks.output;
  EXPECT_EQ(count_of(ranks.output, "\nwinner: "), 1u) << ranks.output;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "tuned.json"));
  // The DB read back: the 4 sweep trials and the leaders' rounds, all of this problem.
  const CliResult report = run_cli("report " + db);
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_EQ(count_of(report.output, "| ok |"), 4u) << report.output;
}

// Rank 1 killed (SIGKILL) once it has sent some trials: mpirun ends the job, and every
// trial rank 0 reported gathered is in its DB, so a single-process tune resumed from it
// reuses them all. 400 steps a trial, so that on a quiet machine the sweep outlasts the
// 0.1 s poll that finds rank 1's first trial.
TEST(MpiCli, AKilledRankLosesNoneOfTheTrialsThatFinished) {
  ScratchDir dir;
  const std::string db = (dir.path() / "tune.db").string();
  const std::string out = (dir.path() / "out.txt").string();
  const std::string space =
      "--model lenet5 --data fake --fake-count 256 --batch 16 --layouts nchw,nhwc --algorithms "
      "direct,direct-small,gemm,winograd,fft-own --threads-list 1 --strategy exhaustive --steps "
      "400 "
      "--max-steps 400 "
      "--racing off --db " +
      db + " --out " + (dir.path() / "tuned.json").string();
  // The ranks are mpirun's children; rank 1 is the one whose environment says so.
  std::ofstream(dir.path() / "kill.sh")
      << std::string(TUNESCOPE_MPIEXEC) << " --allow-run-as-root --oversubscribe -np 2 "
      << TUNESCOPE_CLI_PATH << " tune " << space << " > " << out << " 2>&1 &\n"
      << "launcher=$!\n"
      << "for i in $(seq 600); do grep -q '  rank 1: ' " << out << " && break; sleep 0.1; done\n"
      << "for d in /proc/[0-9]*; do p=${d#/proc/}\n"  // mpirun's children (no procps needed)
      << "  [ \"$(cut -d' ' -f4 $d/stat 2>/dev/null)\" = \"$launcher\" ] || continue\n"
      << "  if tr '\\0' '\\n' < $d/environ | grep -qx OMPI_COMM_WORLD_RANK=1; then\n"
      << "    kill -9 $p; echo killed rank 1; fi\n"
      << "done\n"
      << "wait $launcher; echo launcher exit $?\n";
  const CliResult killed = run_command("timeout 600 bash " + (dir.path() / "kill.sh").string());
  const std::string output = file_bytes(out);
  ASSERT_NE(killed.output.find("killed rank 1"), std::string::npos) << killed.output << output;
  EXPECT_EQ(killed.output.find("launcher exit 0"), std::string::npos) << killed.output;
  EXPECT_EQ(output.find("winner:"), std::string::npos) << "the tune ended anyway:\n" << output;
  const size_t reported = count_of(output, "  rank 0: ") + count_of(output, "  rank 1: ");
  ASSERT_GE(count_of(output, "  rank 1: "), 1u) << output;
  // Resumed in one process: every reported trial comes back from the DB.
  const CliResult resumed = run_cli("tune " + space);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  // At least those reported (rank 0 may have committed one more as the kill came).
  const size_t at = resumed.output.find(" trials reused from");
  ASSERT_NE(at, std::string::npos) << resumed.output;
  const size_t line = resumed.output.rfind('\n', at);
  const size_t reused = std::stoul(resumed.output.substr(line + 1, at - line - 1));
  EXPECT_GE(reused, reported) << output << resumed.output;
}

TEST(MpiCli, TuneOverRanksNeedsADbAndTheExhaustiveList) {
  ScratchDir dir;
  const std::string tune = "tune --model lenet5 --data fake --fake-count 64 --batch 16 --out " +
                           (dir.path() / "tuned.json").string();
  const CliResult no_db = run_ranks(2, tune);
  EXPECT_EQ(no_db.exit_code, 2) << no_db.output;
  EXPECT_NE(no_db.output.find("give --db"), std::string::npos) << no_db.output;
  const CliResult per_layer =
      run_ranks(2, tune + " --strategy per-layer --db " + (dir.path() / "t.db").string());
  EXPECT_EQ(per_layer.exit_code, 2) << per_layer.output;
  EXPECT_NE(per_layer.output.find("exhaustive"), std::string::npos) << per_layer.output;
}

TEST(MpiCli, AnErrorOnTheRanksEndsThemAllWithItsExitCode) {
  const CliResult ranks = run_ranks(2, "train --model lenet5 --threads 1 --data /no/such/folder");
  EXPECT_EQ(ranks.exit_code, 2) << ranks.output;
  EXPECT_NE(ranks.output.find("rank 0: error:"), std::string::npos) << ranks.output;
  EXPECT_NE(ranks.output.find("/no/such/folder"), std::string::npos) << ranks.output;
}
#else
TEST(MpiCli, SeveralRanksWithoutMpiExitTwoSayingSo) {
  // What mpirun tells each rank it starts; this build has no MPI to join them with.
  const CliResult r = run_command(std::string("env OMPI_COMM_WORLD_SIZE=2 ") + TUNESCOPE_CLI_PATH +
                                  " train " + kLenet);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("built without MPI"), std::string::npos) << r.output;
}

TEST(MpiCli, TwoRankRuns) {
  GTEST_SKIP() << "this build has no MPI (TUNESCOPE_MPI=OFF, or libopenmpi-dev missing): the "
                  "2-rank runs are not tested";
}
#endif

}  // namespace
}  // namespace tunescope::test_support
