// The ranked table of a tune: printed at the end of `tunescope tune` and by
// `tunescope report results.db`, from the same TuneReport, so both read alike.
#pragma once

#include "core/tuner/Tuner.h"

namespace tunescope::cli {

// The ok trials in the tune's ranking (the winner leads), then the invalid, failed and
// skipped ones with their reasons, as a Markdown table on stdout: ex/s, spread, speedup
// vs the baseline, concurrency (share of busy time with >= 2 kernels in flight / mean
// kernels in flight) and a note (re-measured, steps, the top kernel's share).
void print_ranking(const tuner::TuneReport& report);

}  // namespace tunescope::cli
