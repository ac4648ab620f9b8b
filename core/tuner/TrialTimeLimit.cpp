// The per-trial time limit between steps.
#include "core/tuner/TrialTimeLimit.h"

#include <limits>

#include "core/base/Error.h"

namespace tunescope::tuner {

std::string steps_text(int64_t steps) { return cat(steps, " step", steps == 1 ? "" : "s"); }

std::string time_limit_reason(double limit_seconds, int64_t steps, int trials) {
  const std::string pair = trials > 1 ? cat("x", trials, " for trials measured together; ") : "";
  return cat("exceeded the per-trial time limit of ", limit_seconds, " s (", pair, "after ",
             steps_text(steps), ")");
}

TrialTimeLimit::TrialTimeLimit(double limit_seconds, int trials, StepCounter* counter)
    : limit_seconds_(limit_seconds), trials_(trials), counter_(counter) {}

void TrialTimeLimit::step_done() {
  ++steps_;
  if (counter_) counter_->store(steps_, std::memory_order_relaxed);
  if (limit_seconds_ <= 0) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed > limit_seconds_ * trials_)
    fail(ErrorKind::runtime, time_limit_reason(limit_seconds_, steps_, trials_));
}

double TrialTimeLimit::seconds_left() const {
  if (limit_seconds_ <= 0) return std::numeric_limits<double>::infinity();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return limit_seconds_ * trials_ - elapsed;
}

}  // namespace tunescope::tuner
