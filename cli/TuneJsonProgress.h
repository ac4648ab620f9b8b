// `tunescope tune --progress jsonl`: the tune's progress as JSON Lines on stdout, one
// object per line, flushed as it happens, for programs that drive the CLI (the GUI's
// Run tab). Every stdout line is JSON: the human-readable output (header, ranking,
// winner) moves to stderr, as do errors ("tunescope: error: ...", exit 1 or 2).
//
// Schema "tunescope.tune-progress/1" (fields in this order; numbers are JSON numbers,
// a missing value is null):
//   {"event":"start","schema":"tunescope.tune-progress/1","model":"lenet5","batch":8,
//    "data":"fake","strategy":"exhaustive","strategy_reason":"...","total":4,
//    "db":"results.sqlite"|null}
//     Before the first trial (after the reference run); total = candidates that run;
//     strategy: the one run (what --strategy auto chose), strategy_reason: why.
//   {"event":"trial_start","index":1,"total":4,"candidate":"nchw conv=direct threads=1"}
//     A candidate starts measuring (not sent for trials reused by --resume).
//   {"event":"trial","index":1,"total":4,"candidate":"...","status":"ok"|"invalid"|"failed",
//    "reason":"...","reused":false,"median_eps":5843.0,"spread":0.27,"seconds":1.9,
//    "elapsed":4.2,"eta":12.6,"best":{"candidate":"...","median_eps":5843.0}|null,
//    "eps_low":5790.1|null,"eps_high":5899.7|null,"steps":14,"stop":"converged"}
//     A candidate finished. median_eps (examples/s) and spread ((p90-p10)/median of the
//     step times) are 0 unless ok; seconds: this trial's wall time; elapsed: since the
//     tune started; eta: seconds left at the mean pace so far; best: the best ok so far;
//     eps_low/eps_high: the 95% interval of median_eps (null unless ok with >= 6 steps);
//     steps: timed steps (0 unless ok); stop: why timing stopped (converged, max_steps,
//     time_cap, raced_out, brief: a halving round before the last; none unless ok).
//   {"event":"round","index":3,"total":9,"round":12,"members":7,"racing":4,
//    "to_decide":40|null,"least":6,"most":200,"elapsed":8.3}
//     Interleaved rounds under way: the stage's round so far (the first of each stage, then
//     at most one line a half second), its members and those still racing, the rounds of
//     the stage that the last look's verdict says would decide every open comparison (null
//     while it cannot say, or once decided), the rounds it runs at least and its cap
//     (max_steps). index: the trials recorded before the stage (its members come as trial
//     lines when it ends).
//   {"event":"done","interrupted":false,"trials":4,"winner":{"candidate":"...",
//    "median_eps":5843.0,"spread":0.27,"eps_low":...|null,"eps_high":...|null}|null,
//    "decision":"...","out":"tuned.json"|null,
//    "traces":{"best":"dir/best.json","baseline":"dir/baseline.json"},"db":"..."|null,
//    "seconds":13.1,"measurement_seconds":11.9,"measurement_cpu_seconds":12.2,
//    "phases":{"reference":{"seconds":0.4,"cpu_seconds":0.4},"choice":{...},"finds":{...},
//              "sweep":{...},"rounds":{...}}}
//     The tune ended. measurement_*: the measurement cost (TuneCost.h), phases: each
//     phase's wall and CPU seconds. Interrupted (SIGINT/SIGTERM, exit 130/143): winner is the best
//     so far (or null), out null and traces {} (a partial tune writes no result files).
// Skipped candidates (unsupported, or not started within --budget) send no event; they
// are in the results DB and the ranking. A tune that fails sends no done event.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "core/tuner/Tuner.h"

namespace tunescope::cli {

inline constexpr const char* kTuneProgressSchema = "tunescope.tune-progress/1";

class TuneJsonProgress {
 public:
  struct Run {
    std::string model;
    int64_t batch = 0;
    std::string data;
    std::string strategy;  // as requested; replaced by the one run when the tuner chooses
    std::string db_path;   // empty: no DB
  };

  // Takes over stdout for the JSON lines and points the process's fd 1 at stderr, so
  // that nothing else (our printf or a library's) can put a non-JSON line on stdout.
  explicit TuneJsonProgress(Run run);
  ~TuneJsonProgress();
  TuneJsonProgress(const TuneJsonProgress&) = delete;
  TuneJsonProgress& operator=(const TuneJsonProgress&) = delete;

  // The tuner's choice listener: the strategy run and why go into the start event.
  void chosen(const tuner::StrategyChoice& choice);
  // The tuner's progress callback: trial_start, trial or round (and start before the first).
  void update(const tuner::TuneProgress& progress);
  // `out_path` empty when no config was written; `traces` maps "best"/"baseline" to
  // the files written.
  void done(const tuner::TuneReport& report, const std::string& out_path,
            const std::map<std::string, std::string>& traces);

 private:
  void emit(const std::string& line);
  double elapsed() const;

  Run run_;
  std::string strategy_reason_;
  std::FILE* out_;
  bool started_ = false;
  static constexpr double kRoundEventSeconds = 0.5;  // between round lines of one stage
  double last_round_at_ = 0;                         // elapsed() at the last round line
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace tunescope::cli
