// A tune's cost per phase (TuneCost.h).
#include "core/tuner/TuneCost.h"

#include <sys/resource.h>

#include "core/base/Error.h"

namespace tunescope::tuner {

namespace {

double seconds_of(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

}  // namespace

double cpu_seconds_now() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage usage{};
    if (getrusage(who, &usage) == 0)
      total += seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
  }
  return total;
}

PhaseCost& PhaseCost::operator+=(const PhaseCost& other) {
  wall_seconds += other.wall_seconds;
  cpu_seconds += other.cpu_seconds;
  return *this;
}

PhaseCost PhaseCost::operator-(const PhaseCost& other) const {
  return {wall_seconds - other.wall_seconds, cpu_seconds - other.cpu_seconds};
}

PhaseCost TuneCost::measurement() const {
  PhaseCost total = choice;
  total += finds;
  total += sweep;
  total += rounds;
  return total;
}

std::string TuneCost::summary() const {
  auto phase = [](const char* name, const PhaseCost& p) {
    char text[96];
    std::snprintf(text, sizeof text, "%s %.2f s (CPU %.2f s)", name, p.wall_seconds, p.cpu_seconds);
    return std::string(text);
  };
  return cat(phase("reference", reference), ", ", phase("choice", choice), ", ",
             phase("finds", finds), ", ", phase("sweep", sweep), ", ", phase("rounds", rounds),
             "; ", phase("measurement cost", measurement()));
}

PhaseTimer::PhaseTimer(PhaseCost& into)
    : into_(&into), wall_start_(std::chrono::steady_clock::now()), cpu_start_(cpu_seconds_now()) {}

void PhaseTimer::stop() {
  if (!into_) return;
  into_->wall_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
  into_->cpu_seconds += cpu_seconds_now() - cpu_start_;
  into_ = nullptr;
}

}  // namespace tunescope::tuner
