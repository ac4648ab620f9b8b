// Which estimator of a candidate's step time should the tuner use? Times real configs
// repeatedly, as the tuner does (a fresh session, warm-up, steps timed one by one inside
// one train_steps call), quiet and with a one-core busy loop that this program starts
// and stops itself, alternating run by run so that drift hits both alike. For each
// estimator (median, 20% trimmed mean, minimum, p10, p25) it prints the run-to-run
// spread of its value ((max - min) / median over the runs) and its shift under load
// (median loaded / median quiet - 1), and the width of the median's and p25's 95%
// order-statistic interval. Results: docs/TUNER-MEASUREMENT.md.
//
//   bench_step_estimators [--model lenet5] [--batch 128] [--runs 6] [--steps 40]
//                         [--configs nchw:gemm:1,nchw:gemm:2,nhwc:gemm:2]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/Error.h"
#include "core/engine/RunConfig.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"
#include "core/tuner/StepStatistics.h"

namespace {

using namespace tunescope;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string model = "lenet5";
  int64_t batch = 128;
  int runs = 6;
  int64_t steps = 40;
  int64_t warmup = 2;
  std::string configs = "nchw:gemm:1,nchw:gemm:2,nhwc:gemm:2";
};

// A busy loop on one core for as long as the object lives.
class BusyLoop {
 public:
  BusyLoop() : pid_(fork()) {
    if (pid_ == 0) {
      volatile unsigned long spin = 0;
      for (;;) spin = spin + 1;
    }
    if (pid_ < 0) fail(ErrorKind::runtime, "fork failed");
  }
  ~BusyLoop() {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  BusyLoop(const BusyLoop&) = delete;
  BusyLoop& operator=(const BusyLoop&) = delete;

 private:
  pid_t pid_;
};

std::vector<double> time_run(const SessionOptions& options, int64_t warmup, int64_t steps) {
  TrainingSession session(options);
  session.train_steps(1 + warmup);  // the tuner's checked first step, then its warm-up
  std::vector<double> seconds;
  auto last = Clock::now();
  session.train_steps(steps, [&](int64_t, int64_t, const StepStats&) {
    const auto now = Clock::now();
    seconds.push_back(std::chrono::duration<double>(now - last).count());
    last = now;
  });
  return seconds;
}

const char* kEstimators[] = {"median", "trimmed20", "min", "p10", "p25"};

std::map<std::string, double> estimators_of(const std::vector<double>& seconds) {
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  return {{"median", tuner::quantile_of_sorted(sorted, 0.5)},
          {"trimmed20", tuner::trimmed_mean(sorted, 0.2)},
          {"min", sorted.front()},
          {"p10", tuner::quantile_of_sorted(sorted, 0.1)},
          {"p25", tuner::quantile_of_sorted(sorted, 0.25)}};
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return tuner::quantile_of_sorted(v, 0.5);
}

double spread_of(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return (*hi - *lo) / median_of(v);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--model")
      o.model = value;
    else if (key == "--batch")
      o.batch = std::stoll(value);
    else if (key == "--runs")
      o.runs = std::stoi(value);
    else if (key == "--steps")
      o.steps = std::stoll(value);
    else if (key == "--configs")
      o.configs = value;
    else {
      std::fprintf(stderr, "bench_step_estimators: unknown option %s\n", key.c_str());
      return 2;
    }
  }
  if (o.runs < 2 || o.runs > 100 || o.steps < 6 || o.steps > 10000 || o.batch < 1 ||
      o.batch > 4096) {
    std::fprintf(stderr,
                 "bench_step_estimators: --runs 2..100, --steps 6..10000, --batch 1..4096\n");
    return 2;
  }
  std::vector<std::pair<std::string, SessionOptions>> configs;
  std::stringstream list(o.configs);
  for (std::string item; std::getline(list, item, ',');) {
    std::stringstream parts(item);
    std::string layout, conv, threads;
    std::getline(parts, layout, ':');
    std::getline(parts, conv, ':');
    std::getline(parts, threads, ':');
    SessionOptions s;
    s.model = o.model;
    s.data = "fake";
    s.batch = o.batch;
    knobs::layout.set(s.knobs, parse_layout(layout));
    s.conv = parse_conv_choice(conv);
    knobs::threads.set(s.knobs, std::stoi(threads));
    configs.emplace_back(item, s);
  }
  // values[config][load][estimator] over the runs; half widths of the intervals likewise.
  std::map<std::string, std::map<bool, std::map<std::string, std::vector<double>>>> values;
  for (int run = 0; run < o.runs; ++run)
    for (const auto& [name, session] : configs)
      for (bool loaded : {run % 2 == 1, run % 2 == 0}) {
        std::unique_ptr<BusyLoop> busy;
        if (loaded) busy = std::make_unique<BusyLoop>();
        const std::vector<double> seconds = time_run(session, o.warmup, o.steps);
        busy.reset();
        auto& into = values[name][loaded];
        for (const auto& [estimator, value] : estimators_of(seconds))
          into[estimator].push_back(value * 1e3);
        into["median_ci"].push_back(tuner::estimate_quantile(seconds, 0.5).relative_half_width() *
                                    100);
        into["p25_ci"].push_back(tuner::estimate_quantile(seconds, 0.25).relative_half_width() *
                                 100);
        std::fprintf(stderr, "run %d %s %s: median %.2f ms\n", run, name.c_str(),
                     loaded ? "loaded" : "quiet", estimators_of(seconds)["median"] * 1e3);
      }
  std::printf("%s batch %lld, %d runs x %lld timed steps (warm-up %lld), fake data\n",
              o.model.c_str(), static_cast<long long>(o.batch), o.runs,
              static_cast<long long>(o.steps), static_cast<long long>(o.warmup));
  std::printf(
      "| config | estimator | quiet ms | quiet run-to-run spread | loaded ms | loaded spread | "
      "shift under load |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|\n");
  // What ranking needs: each config's estimate relative to the first config's in the
  // same run and load, stable from run to run and unmoved by the load.
  std::printf(
      "\n| config / %s | estimator | quiet ratio | quiet run-to-run spread | loaded ratio | loaded "
      "spread | shift under load |\n",
      configs.front().first.c_str());
  std::printf("|---|---|---:|---:|---:|---:|---:|\n");
  for (size_t k = 1; k < configs.size(); ++k)
    for (const char* e : kEstimators) {
      std::map<bool, std::vector<double>> ratios;
      for (bool loaded : {false, true}) {
        const auto& mine = values[configs[k].first][loaded][e];
        const auto& first = values[configs.front().first][loaded][e];
        for (size_t r = 0; r < mine.size(); ++r) ratios[loaded].push_back(mine[r] / first[r]);
      }
      std::printf("| %s | %s | %.3f | %.1f%% | %.3f | %.1f%% | %+.1f%% |\n",
                  configs[k].first.c_str(), e, median_of(ratios[false]),
                  spread_of(ratios[false]) * 100, median_of(ratios[true]),
                  spread_of(ratios[true]) * 100,
                  (median_of(ratios[true]) / median_of(ratios[false]) - 1) * 100);
    }
  std::printf("\n");
  for (const auto& [name, session] : configs) {
    for (const char* e : kEstimators) {
      const auto& q = values[name][false][e];
      const auto& l = values[name][true][e];
      std::printf("| %s | %s | %.3f | %.1f%% | %.3f | %.1f%% | %+.1f%% |\n", name.c_str(), e,
                  median_of(q), spread_of(q) * 100, median_of(l), spread_of(l) * 100,
                  (median_of(l) / median_of(q) - 1) * 100);
    }
    for (const char* e : {"median_ci", "p25_ci"})
      std::printf("| %s | %s half-width at %lld steps | %.1f%% | | %.1f%% | | |\n", name.c_str(), e,
                  static_cast<long long>(o.steps), median_of(values[name][false][e]),
                  median_of(values[name][true][e]));
  }
  return 0;
}
