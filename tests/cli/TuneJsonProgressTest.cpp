// `tunescope tune --progress jsonl` read as a program reads it (the GUI's Run tab):
// every stdout line parses as JSON, the events come in the documented order
// (start, then trial_start/trial per candidate, round lines while the final interleaved
// rounds run, then done) with consistent figures,
// the report goes to stderr, and an interrupted tune still ends with a done event.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/CpuAffinity.h"
#include "tests/cli/RunCli.h"
#include "tests/cli/TestFolder.h"
#include "tests/cli/TinyTuneArgs.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using tunescope::test_support::ScratchDir;

// The CLI as a child: stdout read line by line through a pipe, stderr to a file.
// `on_line` sees each stdout line as it arrives (and may signal the child).
struct Child {
  pid_t pid = -1;
  int exit_code = -1000;  // or minus the signal that ended it
  std::vector<std::string> lines;
};

template <typename OnLine>
Child run_tune(const std::vector<std::string>& args, const std::string& stderr_path,
               OnLine on_line) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  Child child;
  child.pid = fork();
  if (child.pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    if (!std::freopen(stderr_path.c_str(), "w", stderr)) _exit(127);
    std::vector<char*> argv{const_cast<char*>(TUNESCOPE_CLI_PATH)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(TUNESCOPE_CLI_PATH, argv.data());
    _exit(127);
  }
  close(fds[1]);
  FILE* out = fdopen(fds[0], "r");
  char* line = nullptr;
  size_t size = 0;
  ssize_t n;
  while ((n = getline(&line, &size, out)) > 0) {
    child.lines.emplace_back(line, static_cast<size_t>(n) - (line[n - 1] == '\n' ? 1 : 0));
    on_line(child, child.lines.back());
  }
  free(line);
  fclose(out);
  int status = 0;
  waitpid(child.pid, &status, 0);
  child.exit_code = WIFEXITED(status)     ? WEXITSTATUS(status)
                    : WIFSIGNALED(status) ? -WTERMSIG(status)
                                          : -1000;
  return child;
}

std::vector<std::string> tune_args(const ScratchDir& d, const std::string& algorithms, int steps) {
  std::vector<std::string> args = tunescope::test_support::tiny_lenet5_tune_args();
  args.insert(args.end(), {"--algorithms", algorithms, "--steps", std::to_string(steps), "--warmup",
                           "1", "--db", d.at("results.sqlite"), "-o", d.at("tuned.json"),
                           "--trace-dir", d.at("traces"), "--progress", "jsonl", "--strategy",
                           "exhaustive"});  // a known candidate count
  return args;
}

// Every line parsed; a line that is not JSON fails the test naming it.
std::vector<json> parse_lines(const std::vector<std::string>& lines) {
  std::vector<json> events;
  for (const std::string& line : lines) {
    json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(event.is_object() && event.contains("event")) << "not a JSON event line: " << line;
    events.push_back(std::move(event));
  }
  return events;
}

TEST(TuneJsonProgress, EveryStdoutLineIsAnEventInTheDocumentedOrder) {
  const ScratchDir d;
  const Child child = run_tune(tune_args(d, "direct,gemm", 2), d.at("stderr.txt"),
                               [](Child&, const std::string&) {});
  const std::string log = tunescope::test_support::file_bytes(d.at("stderr.txt"));
  ASSERT_EQ(child.exit_code, 0) << log;
  const std::vector<json> all = parse_lines(child.lines);
  // The final interleaved rounds of the leaders report as they go: round lines after the
  // last trial and before done, the first round of the stage among them. (The sweep may
  // race every candidate but one out: then no rounds run, and the decision says so.)
  std::vector<json> events, rounds;
  for (const json& e : all) (e["event"] == "round" ? rounds : events).push_back(e);
  ASSERT_FALSE(all.empty());
  const std::string decision = all.back().value("decision", "");
  ASSERT_EQ(!rounds.empty(), decision.find("interleaved rounds") != std::string::npos) << decision;
  if (!rounds.empty()) {
    EXPECT_EQ(rounds.front()["round"], 1) << rounds.front().dump();
  }
  size_t last_round = 0;
  for (const json& r : rounds) {
    EXPECT_EQ(r["index"], 4) << r.dump();  // the trials before the rounds
    EXPECT_EQ(r["total"], 4) << r.dump();
    EXPECT_GE(r["round"].get<size_t>(), std::max<size_t>(last_round, 1)) << r.dump();
    last_round = r["round"].get<size_t>();
    EXPECT_GE(r["members"].get<size_t>(), 2u) << r.dump();
    EXPECT_LE(r["racing"].get<size_t>(), r["members"].get<size_t>()) << r.dump();
    EXPECT_GE(r["racing"].get<size_t>(), 1u) << r.dump();
    EXPECT_TRUE(r["to_decide"].is_null() || r["to_decide"].get<size_t>() > 0) << r.dump();
    EXPECT_EQ(r["least"], 6) << r.dump();   // the sign-flip test's minimum (--steps 2)
    EXPECT_EQ(r["most"], 200) << r.dump();  // --max-steps' default
    EXPECT_GE(r["elapsed"].get<double>(), 0) << r.dump();
  }
  const auto position = [&](const char* event, bool last) {
    std::vector<size_t> at;
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i]["event"] == event) at.push_back(i);
    return at.empty() ? all.size() : (last ? at.back() : at.front());
  };
  if (!rounds.empty()) {
    EXPECT_GT(position("round", false), position("trial", true));
    EXPECT_LT(position("round", true), position("done", false));
  }
  // 2 layouts x 2 algorithms: start, 4 x (trial_start, trial), done.
  ASSERT_EQ(events.size(), 10u) << tunescope::test_support::file_bytes(d.at("stderr.txt"));

  const json& start = events.front();
  EXPECT_EQ(start["event"], "start");
  EXPECT_EQ(start["schema"], "tunescope.tune-progress/1");
  EXPECT_EQ(start["model"], "lenet5");
  EXPECT_EQ(start["batch"], 8);
  EXPECT_EQ(start["strategy"], "exhaustive");
  EXPECT_EQ(start["total"], 4);
  EXPECT_EQ(start["db"], d.at("results.sqlite"));

  std::set<std::string> candidates;
  double best_eps = 0;
  std::string best;
  for (int i = 1; i <= 4; ++i) {
    const json& begin = events[(2 * static_cast<size_t>(i)) - 1];
    const json& trial = events[2 * static_cast<size_t>(i)];
    EXPECT_EQ(begin["event"], "trial_start");
    EXPECT_EQ(begin["index"], i);
    EXPECT_EQ(begin["total"], 4);
    EXPECT_EQ(trial["event"], "trial");
    EXPECT_EQ(trial["index"], i);
    EXPECT_EQ(trial["candidate"], begin["candidate"]);
    candidates.insert(trial["candidate"].get<std::string>());
    EXPECT_EQ(trial["status"], "ok") << trial.dump();
    EXPECT_FALSE(trial["reused"].get<bool>());
    EXPECT_GT(trial["median_eps"].get<double>(), 0);
    EXPECT_GE(trial["spread"].get<double>(), 0);
    EXPECT_GT(trial["seconds"].get<double>(), 0);
    EXPECT_GE(trial["elapsed"].get<double>(), trial["seconds"].get<double>());
    EXPECT_GE(trial["eta"].get<double>(), 0);
    // Adaptive timing: at least --steps 2, and the median's interval from 6 steps on.
    const auto steps = trial["steps"].get<int64_t>();
    EXPECT_GE(steps, 2) << trial.dump();
    const std::string stop = trial["stop"];
    EXPECT_TRUE(stop == "converged" || stop == "max_steps" || stop == "time_cap" ||
                stop == "raced_out")
        << stop;
    if (steps >= 6) {
      ASSERT_TRUE(trial["eps_low"].is_number() && trial["eps_high"].is_number()) << trial.dump();
      EXPECT_LE(trial["eps_low"].get<double>(), trial["median_eps"].get<double>());
      EXPECT_GE(trial["eps_high"].get<double>(), trial["median_eps"].get<double>());
    } else {
      EXPECT_TRUE(trial["eps_low"].is_null() && trial["eps_high"].is_null()) << trial.dump();
    }
    // The best so far is the fastest ok trial up to this one.
    if (trial["median_eps"].get<double>() > best_eps) {
      best_eps = trial["median_eps"];
      best = trial["candidate"];
    }
    ASSERT_TRUE(trial["best"].is_object()) << trial.dump();
    EXPECT_EQ(trial["best"]["candidate"], best);
    EXPECT_EQ(trial["best"]["median_eps"].get<double>(), best_eps);
  }
  EXPECT_EQ(events[8]["eta"].get<double>(), 0);  // nothing left after the last
  EXPECT_EQ(candidates.size(), 4u) << "candidate labels must differ";

  const json& done = events.back();
  EXPECT_EQ(done["event"], "done");
  EXPECT_FALSE(done["interrupted"].get<bool>());
  EXPECT_EQ(done["trials"], 4);
  ASSERT_TRUE(done["winner"].is_object());
  EXPECT_TRUE(candidates.count(done["winner"]["candidate"].get<std::string>())) << done.dump();
  EXPECT_GT(done["winner"]["median_eps"].get<double>(), 0);
  ASSERT_TRUE(done["winner"]["eps_low"].is_number()) << done.dump();  // the rounds are at least 6
  EXPECT_LE(done["winner"]["eps_low"].get<double>(), done["winner"]["median_eps"].get<double>());
  EXPECT_GE(done["winner"]["eps_high"].get<double>(), done["winner"]["median_eps"].get<double>());
  EXPECT_EQ(done["out"], d.at("tuned.json"));
  EXPECT_TRUE(fs::exists(d.at("tuned.json")));
  EXPECT_EQ(done["db"], d.at("results.sqlite"));
  ASSERT_TRUE(done["traces"].is_object());
  EXPECT_EQ(done["traces"]["best"], (fs::path(d.at("traces")) / "best.json").string());
  EXPECT_EQ(done["traces"]["baseline"], (fs::path(d.at("traces")) / "baseline.json").string());
  EXPECT_TRUE(fs::exists(done["traces"]["best"].get<std::string>()));
  EXPECT_TRUE(fs::exists(done["traces"]["baseline"].get<std::string>()));
  // One thread in every candidate: no core-distance watch (TwoThreadCandidatesCarry...).
  EXPECT_TRUE(done["core_distance"].is_null()) << done.dump();
  // The measurement cost is the sum of the measuring phases, and fits in the tune's seconds.
  ASSERT_TRUE(done["phases"].is_object()) << done.dump();
  double measuring = 0, measuring_cpu = 0;
  for (const char* phase : {"reference", "choice", "finds", "sweep", "rounds"}) {
    ASSERT_TRUE(done["phases"][phase]["seconds"].is_number()) << phase << done.dump();
    ASSERT_TRUE(done["phases"][phase]["cpu_seconds"].is_number()) << phase << done.dump();
    if (std::string(phase) != "reference") {
      measuring += done["phases"][phase]["seconds"].get<double>();
      measuring_cpu += done["phases"][phase]["cpu_seconds"].get<double>();
    }
  }
  EXPECT_NEAR(done["measurement_seconds"].get<double>(), measuring, 1e-9) << done.dump();
  EXPECT_NEAR(done["measurement_cpu_seconds"].get<double>(), measuring_cpu, 1e-9) << done.dump();
  EXPECT_GT(done["phases"]["sweep"]["seconds"].get<double>(), 0) << "exhaustive sweeps";
  EXPECT_LE(done["measurement_seconds"].get<double>(), done["seconds"].get<double>());

  // The human report moved to stderr, where a user of the GUI's log still reads it.
  EXPECT_NE(log.find("winner: " + done["winner"]["candidate"].get<std::string>()),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("| 1 |"), std::string::npos) << log;
  EXPECT_NE(log.find("where it went: reference "), std::string::npos) << log;
}

TEST(TuneJsonProgress, TwoThreadCandidatesCarryTheCoreDistanceWatch) {
  // Where two CPUs are allowed, a tune of two-thread candidates probes how far apart the
  // host has them when it starts and when it ends.
  const ScratchDir d;
  std::vector<std::string> args = tune_args(d, "direct", 2);
  args.insert(args.end(), {"--threads-list", "2", "--layouts", "nchw"});
  const Child child = run_tune(args, d.at("stderr.txt"), [](Child&, const std::string&) {});
  const std::string log = tunescope::test_support::file_bytes(d.at("stderr.txt"));
  ASSERT_EQ(child.exit_code, 0) << log;
  const json done = parse_lines(child.lines).back();
  ASSERT_EQ(done["event"], "done") << done.dump();
  if (tunescope::allowed_cpus().size() < 2) {
    EXPECT_TRUE(done["core_distance"].is_null()) << done.dump();
    return;
  }
  ASSERT_TRUE(done["core_distance"].is_object()) << done.dump();
  EXPECT_EQ(done["core_distance"]["cpus"].size(), 2u) << done.dump();
  EXPECT_GT(done["core_distance"]["start_ns"].get<double>(), 0) << done.dump();
  EXPECT_GT(done["core_distance"]["end_ns"].get<double>(), 0) << done.dump();
  EXPECT_TRUE(done["core_distance"]["moved"].is_boolean()) << done.dump();
  EXPECT_NE(log.find("cores: a cache line went from CPU "), std::string::npos) << log;
}

TEST(TuneJsonProgress, SigintAfterTheFirstTrialEndsWithAnInterruptedDoneEvent) {
  const ScratchDir d;
  bool signalled = false;
  const Child child =
      run_tune(tune_args(d, "direct,gemm,fft-fftw,fft-own", 12), d.at("stderr.txt"),
               [&](Child& c, const std::string& line) {
                 if (!signalled && line.find("\"event\":\"trial\"") != std::string::npos) {
                   signalled = true;
                   kill(c.pid, SIGINT);
                 }
               });
  ASSERT_TRUE(signalled) << tunescope::test_support::file_bytes(d.at("stderr.txt"));
  EXPECT_EQ(child.exit_code, 130) << tunescope::test_support::file_bytes(d.at("stderr.txt"));
  const std::vector<json> events = parse_lines(child.lines);
  ASSERT_GE(events.size(), 4u);
  const json& done = events.back();
  EXPECT_EQ(done["event"], "done");
  EXPECT_TRUE(done["interrupted"].get<bool>());
  const auto trials = std::count_if(events.begin(), events.end(),
                                    [](const json& e) { return e["event"] == "trial"; });
  EXPECT_GE(trials, 1);
  EXPECT_LT(trials, 8) << "the tune was not stopped";
  EXPECT_GE(done["trials"].get<int64_t>(), trials);  // skipped candidates count, but send no event
  EXPECT_TRUE(done["out"].is_null());
  EXPECT_TRUE(done["traces"].empty());
  EXPECT_FALSE(fs::exists(d.at("tuned.json")));
}

TEST(TuneJsonProgress, BarStaysTheDefaultAndABadModeExitsTwo) {
  const ScratchDir d;
  const auto plain = tunescope::test_support::run_cli(
      "tune --model lenet5 --data fake --fake-count 64 --test-limit 16 "
      "--batch 8 --layouts nchw --algorithms direct --steps 1 --warmup 0 "
      "-o " +
      d.at("plain.json"));
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(plain.output.find("{\"event\""), std::string::npos) << plain.output;
  EXPECT_NE(plain.output.find("winner:"), std::string::npos) << plain.output;

  const auto bad = tunescope::test_support::run_cli("tune --model lenet5 -o " + d.at("t.json") +
                                                    " --progress xml");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--progress"), std::string::npos) << bad.output;
}

}  // namespace
