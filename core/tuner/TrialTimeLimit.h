// The per-trial time limit. In the measuring process it can only act between steps
// (a step cannot be interrupted safely), so every finished step is counted and checked;
// an isolated trial's parent reads the same count to say how far a killed child got.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace tunescope::tuner {

// Where a trial counts its finished steps; shared memory when the trial runs in a child.
using StepCounter = std::atomic<int64_t>;

// "1 step", "3 steps": how far a trial got, in its failure reasons.
std::string steps_text(int64_t steps);

// "exceeded the per-trial time limit of 2 s (after 3 steps)": one wording for both
// places. `trials` > 1: several trials measured together, allowed that many limits.
std::string time_limit_reason(double limit_seconds, int64_t steps, int trials = 1);

class TrialTimeLimit {
 public:
  // `limit_seconds` 0: no limit; `trials` measured together get `trials` limits.
  // `counter` may be null.
  TrialTimeLimit(double limit_seconds, int trials, StepCounter* counter);
  // Counts a finished step; throws Error(runtime) with time_limit_reason once the
  // time since construction exceeds the limit.
  void step_done();
  // Seconds until the limit (infinite without one): adaptive timing stops well before it.
  double seconds_left() const;

 private:
  double limit_seconds_;
  int trials_;
  StepCounter* counter_;
  int64_t steps_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace tunescope::tuner
