// The `halving` strategy's schedule, successive halving (Jamieson & Talwalkar, 2016):
// every candidate is timed briefly, the fastest 1/eta go on to a round timed eta times
// longer, until one remains. The last round times the full --steps, so the finalists
// are measured as exhaustive measures everyone, while the slow majority costs only a
// few steps each. A candidate's numerics are checked once, in the first round; the later
// rounds build it again and time it without the check (MeasureOptions::check_numerics).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tunescope::tuner {

// Each round keeps the fastest third: with eta = 3 a 16-candidate space races in three
// rounds (16 -> 6 -> 2 -> 1) and its first round times steps / 9.
inline constexpr size_t kHalvingEta = 3;

// How many candidates go on from a round of `racing`: the fastest ceil(racing / eta).
size_t halving_keep(size_t racing, size_t eta = kHalvingEta);
// Rounds until one of `racing` candidates remains (0 for one or none).
size_t halving_rounds(size_t racing, size_t eta = kHalvingEta);
// Timed steps of a round of `racing` candidates: `final_steps` in the last round (the
// one that leaves one), 1/eta of that in the round before, and so on, at least 1.
int64_t halving_steps(size_t racing, int64_t final_steps, size_t eta = kHalvingEta);
// Measurements a race of `racing` candidates makes over all its rounds (the progress total).
size_t halving_work(size_t racing, size_t eta = kHalvingEta);

}  // namespace tunescope::tuner
