// Bad command lines: unknown flags, numbers out of range or not numbers, and options
// that conflict. Each exits 2 naming the option and the problem and leaves every file
// as it was: in particular a results DB named as --out, or a tuned config that a trace
// would overwrite, is refused before anything runs. (Other flags' cases are in
// tests/cli/CliTest.cpp and tests/cli/TuneCliTest.cpp; --resume without --db in
// tests/cli/TuneInterruptTest.cpp.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/cli/errors/ErrorCase.h"

namespace tunescope::test_support {
namespace {

const std::string kDirectNchwTune =
    "tune --data fake --fake-count 32 --batch 8 --test-limit 16 --layouts nchw "
    "--algorithms direct --steps 1 --warmup 0";

TEST(CliOptionErrors, UnknownFlag) {
  const ScratchDir folder;
  expect_error(folder.path(), {kDirectNchwTune + " --trial-timout 5 -o " + folder.at("tuned.json"),
                               {"not expected", "--trial-timout"}});
}

TEST(CliOptionErrors, NumbersOutOfRange) {
  const ScratchDir folder;
  const std::string out = " -o " + folder.at("tuned.json");
  const ErrorCase cases[] = {
      {kDirectNchwTune + " --trial-timeout -1" + out, {"--trial-timeout", "-1"}},
      {kDirectNchwTune + " --memory-limit-mb -5" + out, {"--memory-limit-mb", "-5"}},
      // The tuner names the config key, the CLI adds the flag (cli/FlagNames.h).
      {kDirectNchwTune + " --budget -1" + out, {"budget (--budget) must be >= 0, got -1"}},
      {kDirectNchwTune + " --strategy fastest" + out,
       {"strategy (--strategy): unknown strategy 'fastest'"}},
      {kDirectNchwTune + " --warmup -1" + out, {"--warmup", "-1"}},
      // Past int64: it must not read as the largest step count and run for ever.
      {kDirectNchwTune + " --steps 99999999999999999999999" + out,
       {"--steps", "99999999999999999999999"}},
      {kDirectNchwTune + " --steps five" + out, {"--steps", "five"}},
      {kDirectNchwTune + " --micro-batches-list 0" + out,
       {"--micro-batches-list", "must be in 1..4096, got 0"}},
      {kDirectNchwTune + " --replicas-list 2,0" + out,
       {"--replicas-list", "must be in 1..256, got 0"}},
      {kDirectNchwTune + " --threads-per-lane-list -1" + out,
       {"--threads-per-lane-list", "must be in 0..1024, got -1"}},
      {kDirectNchwTune + " --isolate maybe" + out, {"--isolate", "maybe"}},
      // Absurd sizes are refused before a thread or a lane is started (the knobs' bounds).
      {kDirectNchwTune + " --threads-list 1,100000000" + out,
       {"--threads-list", "must be in 0..1024, got 100000000"}},
      {kDirectNchwTune + " --streams-list 100000" + out,
       {"--streams-list", "must be in 1..64, got 100000"}},
      // The tuner's check names the list's key, the CLI adds its flag.
      {kDirectNchwTune + " --threads-list 0" + out,
       {"threads_list (--threads-list): thread counts must be >= 1, got 0"}},
      {"train --data fake --fake-count 32 --batch 8 --epochs 1 --threads 100000000",
       {"--threads", "must be in 0..1024, got 100000000"}},
      {"train --data fake --fake-count 2000000000 --epochs 1",
       {"--fake-count", "must be <= 1000000"}},
      {"train --data fake --batch 100000000 --epochs 1", {"--batch", "must be <= 65536"}},
      {"profile --data fake --fake-count 32 --batch 8 --steps 1 --streams 64 --threads-per-lane "
       "1024",
       {"64 lanes x 1024 threads", "more than 1024 threads"}},
      {"train --data fake --fake-count -3 --epochs 1", {"--fake-count", "-3"}},
      {"train --data fake --fake-count 32 --batch 8 --epochs 1 --lr -1", {"--lr", "-1"}},
      {"train --data fake --fake-count 32 --batch 8 --epochs 1 --prefetch -1",
       {"--prefetch", "-1"}},
      {"report " + folder.at("missing.json") + " --top -1", {"--top", "-1"}},
  };
  for (const ErrorCase& c : cases) expect_error(folder.path(), c);
}

TEST(CliOptionErrors, PerLayerStrategyWithPerLayerProduct) {
  const ScratchDir folder;
  expect_error(folder.path(), {kDirectNchwTune + " --strategy per-layer --per-layer-product -o " +
                                   folder.at("tuned.json"),
                               {"--per-layer-product", "--strategy per-layer"}});
}

TEST(CliOptionErrors, OutIsTheResultsDb) {
  const ScratchDir folder;
  const std::string db = folder.at("results.sqlite");
  const CliResult first =
      run_cli(kDirectNchwTune + " --db " + db + " -o " + folder.at("first.json"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  // The same file by another spelling: still refused, and the trials are untouched.
  const std::string same = (folder.path() / "." / "results.sqlite").string();
  expect_error(folder.path(), {kDirectNchwTune + " --db " + db + " -o " + same,
                               {"--out", "--db", "would overwrite the trials"}});
}

TEST(CliOptionErrors, TraceDirWouldOverwriteTheConfig) {
  const ScratchDir folder;
  fs::create_directories(folder.path() / "traces");
  write_file(folder.path() / "traces" / "best.json", R"({"schema": "an earlier tuned config"})");
  expect_error(folder.path(), {kDirectNchwTune + " --trace-dir " + folder.at("traces") + " -o " +
                                   folder.at("traces/best.json"),
                               {"--trace-dir", "best.json", "--out"}});
}

TEST(CliOptionErrors, IsolationOnTheCudaBackend) {
  const ScratchDir folder;
#ifdef TUNESCOPE_HAVE_CUDA
  const std::vector<std::string> expected{"--isolate on", "cuda"};
#else
  // A build without the CUDA toolkit has no cuda backend to isolate: the backend is refused first.
  const std::vector<std::string> expected{"unknown backend 'cuda'"};
#endif
  expect_error(
      folder.path(),
      {kDirectNchwTune + " --isolate on --backend cuda -o " + folder.at("tuned.json"), expected});
}

}  // namespace
}  // namespace tunescope::test_support
