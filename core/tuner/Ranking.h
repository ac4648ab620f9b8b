// How trials are ranked and how the interleaved re-measurement of the top two declares
// the winner: shared by the tune itself and by `report` reading a results DB, so both
// print the same ranking.
#pragma once

#include <string>
#include <vector>

#include "core/tuner/Measurement.h"

namespace tunescope::tuner {

// Simpler first: fewer per-layer overrides, then fewer knobs away from their defaults,
// then fewer threads, then smaller knob counts. Ties within noise go to the simpler config.
bool simpler(const RunConfig& a, const RunConfig& b);

// Indices of the ok trials, best first, by the weight of the evidence and then by speed:
// the interleaved re-measured pair first, then figures from more timed steps (a later
// halving round outranks the candidates it eliminated, whatever their shorter runs
// showed), then higher median ex/s.
std::vector<size_t> rank_ok_trials(const std::vector<TrialResult>& trials);
// rank_ok_trials with the declared winner moved to the front (a tie within noise may
// crown the slightly slower, simpler config).
std::vector<size_t> ranking_led_by(const std::vector<TrialResult>& trials, size_t winner);

struct InterleavedVerdict {
  bool second_wins = false;
  std::string decision;  // how the winner was declared, for the user
};
// The word on `first` (the sweep's fastest) against `second` from their interleaved
// re-measurement: the faster unless the gap is within the noise (the larger spread),
// where the simpler config wins.
InterleavedVerdict interleaved_verdict(const TrialResult& first, const TrialResult& second);

}  // namespace tunescope::tuner
