// `tunescope tune --isolate on --trial-timeout S` as a user runs it: every candidate is
// measured in a child process and comes back whole, so the tune writes the config, one
// DB row per trial and traces of the winner and the baseline that read back with the
// candidates' kernels. (Crashing and hanging candidates need test-only kernels, which
// the CLI does not have: tests/core/tuner/IsolatedTrialTest.cpp.)
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

#include "profiler/TraceFiles.h"
#include "tests/cli/errors/ErrorCase.h"

namespace tunescope::test_support {
namespace {

TEST(TuneIsolationCli, IsolatedTuneWritesConfigTrialsAndTraces) {
  const ScratchDir folder;
  const CliResult r = run_cli(
      "tune --strategy exhaustive --data fake --fake-count 64 --batch 8 --test-limit 16 --layouts "
      "nchw,nhwc "
      "--algorithms direct,gemm --steps 2 --warmup 1 --isolate on --trial-timeout 300 --db " +
      folder.at("results.sqlite") + " -o " + folder.at("tuned.json") + " --trace-dir " +
      folder.at("traces"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("winner:"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(folder.at("tuned.json")));

  sqlite3* db = nullptr;
  ASSERT_EQ(
      sqlite3_open_v2(folder.at("results.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
      SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  // The 4 candidates, then the leaders settled in interleaved rounds (none when racing
  // left one fully measured candidate, else 2 to 4), exactly one of them the winner; the
  // interval and stop rule measured in the children reached every ok row.
  ASSERT_EQ(
      sqlite3_prepare_v2(
          db,
          "SELECT count(*), sum(status = 'ok'), sum(reason LIKE 'interleaved re-measurement%'), "
          "sum(reason LIKE 'interleaved re-measurement winner: %test of the %mean paired%'), "
          "sum(stop_rule IS NULL OR stop_rule = 'none'), sum(steps >= 6 AND eps_low IS NULL), "
          "sum(eps_low > median_eps OR eps_high < median_eps) FROM trials",
          -1, &stmt, nullptr),
      SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  const int64_t settled = sqlite3_column_int64(stmt, 2);
  EXPECT_TRUE(settled == 0 || (settled >= 2 && settled <= 4)) << settled;
  EXPECT_EQ(sqlite3_column_int64(stmt, 0), 4 + settled);
  EXPECT_EQ(sqlite3_column_int64(stmt, 1), 4 + settled);
  EXPECT_EQ(sqlite3_column_int64(stmt, 3), settled > 0 ? 1 : 0);
  EXPECT_EQ(sqlite3_column_int64(stmt, 4), 0) << "an ok row without its stop rule";
  EXPECT_EQ(sqlite3_column_int64(stmt, 5), 0) << "a row of 6 steps or more without its interval";
  EXPECT_EQ(sqlite3_column_int64(stmt, 6), 0) << "an interval that does not hold its median";
  sqlite3_finalize(stmt);
  sqlite3_close(db);

  for (const char* name : {"best.json", "baseline.json"}) {
    const auto trace = profiler::read_trace_file(folder.path() / "traces" / name);
    size_t conv = 0;
    for (const auto& a : trace.activities)
      conv += a.name.str().rfind("direct.", 0) == 0 || a.name.str().rfind("gemm.", 0) == 0;
    EXPECT_GT(conv, 0u) << name << " holds no conv kernel";
  }
}

}  // namespace
}  // namespace tunescope::test_support
