// A tune as the results DB remembers it, for `tunescope report results.db`: what the
// tune itself would rank and declare, rebuilt from the stored rows of one machine and
// problem, whether the tune finished, was interrupted or was resumed.
#pragma once

#include <cstdint>

#include "core/tuner/ResultsDb.h"
#include "core/tuner/Tuner.h"

namespace tunescope::tuner {

// Each config's latest row (neither a skipped row nor a failed re-measurement hides a
// measured one; an ok interleaved re-measurement marks the trial re-measured), in the order the
// configs were first recorded; the baseline (stored_baseline); the ranking of the tune
// (rank_ok_trials), and the winner: the one the latest interleaved rounds declared (its
// row's reason holds the decision) while its row is still the one shown, an older
// build's pair verdict likewise, else the top of the ranking; the latest strategy choice
// recorded for them. No traces; seconds stay 0.
// The baseline among a stored tune's configs in the order they were first recorded: the
// first with the reference's shape (has_reference_shape). The tuner measures its
// reference (the backend's default conv algorithm: direct on cpu, cuDNN's implicit GEMM
// on cuda) first, so a later nchw single-lane config (another algorithm or thread
// count) is just another candidate. Shared by `report` and the GUI's Candidates view.
// Whether a stored row is from the final interleaved rounds (its reason starts with
// kRemeasureReason): not a sweep's verdict, so a resumed tune does not reuse it.
bool from_final_rounds(const TrialRecord& row);
// Whether a stored row is of a config still racing when the final rounds ended (from
// them, and not dropped from the race: stop raced_out).
bool is_remeasurement(const TrialRecord& row);
// Whether a later stored row of a config replaces the one shown for it so far: yes,
// unless it is a skipped or pruned row (a budget skip, a resumed tune's copy, a
// prediction of a config measured before) or an interleaved
// re-measurement that did not end ok (the tune kept the measured figures then).
bool later_row_replaces(const TrialRecord& later);

std::optional<size_t> stored_baseline(const std::vector<RunConfig>& configs_in_recorded_order);

TuneReport stored_tune(const ResultsDb& db, int64_t machine_id, int64_t problem_id);

}  // namespace tunescope::tuner
