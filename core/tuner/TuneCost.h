// Where a tune's seconds go, phase by phase, in wall-clock and CPU time, and the one
// definition of its measurement cost (docs/TUNER-MEASUREMENT.md, "What a tune costs"):
// the seconds spent measuring candidates (auto's pricing probe, the per-layer finds, the
// sweep, the interleaved rounds), the reference that every strategy runs alike left out.
#pragma once

#include <chrono>
#include <string>

namespace tunescope::tuner {

struct PhaseCost {
  double wall_seconds = 0;
  double cpu_seconds = 0;  // this process and the trial children it waited for
  PhaseCost& operator+=(const PhaseCost& other);
  PhaseCost operator-(const PhaseCost& other) const;
};

struct TuneCost {
  PhaseCost reference;  // the reference, its checked steps (auto: timed ones), the load watch
  PhaseCost choice;     // choosing the strategy (auto: the per-layer find's probe)
  PhaseCost finds;      // listing the candidates (per-layer: its finds)
  PhaseCost sweep;      // the candidates measured one by one (the pruner's finds included)
  PhaseCost rounds;     // the interleaved rounds
  // THE measurement cost: choice + finds + sweep + rounds.
  PhaseCost measurement() const;
  // "reference 0.41 s (CPU 0.40 s), choice ..., measurement cost 2.3 s (CPU 2.5 s)".
  std::string summary() const;
};

// Adds the wall and CPU time from its construction to its destruction (or stop()) to
// `into`.
class PhaseTimer {
 public:
  explicit PhaseTimer(PhaseCost& into);
  ~PhaseTimer() { stop(); }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  void stop();

 private:
  PhaseCost* into_;
  std::chrono::steady_clock::time_point wall_start_;
  double cpu_start_;
};

// CPU seconds used so far by this process and its waited-for children (getrusage).
double cpu_seconds_now();

}  // namespace tunescope::tuner
