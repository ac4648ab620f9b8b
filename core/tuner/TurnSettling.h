// When a member of the interleaved rounds no longer needs its settle step
// (MeasureOptions::settle_steps, docs/TUNER-MEASUREMENT.md, "Settle steps"): the first
// step of a turn pays for what the member before it left cold, by an amount that
// differs by config and shrinks relative to a long step. Each turn's settle step is
// timed anyway, so the rounds measure that excess per member as they go, and a member
// whose first step is shown to cost no more than delta/2 over the next stops settling:
// its turn is then its timed step alone, half the steps.
#pragma once

#include <vector>

#include "core/tuner/StepStatistics.h"

namespace tunescope::tuner {

// The ratio of a turn's first step to its timed step, round by round: the median with
// its 95% order-statistic interval (unbounded under 6 pairs). `first` and `next` are
// paired by index; extra entries of the longer one are ignored.
QuantileEstimate cold_start_ratio(const std::vector<double>& first,
                                  const std::vector<double>& next);

// Whether the settle step buys nothing measurable: the interval of cold_start_ratio is
// bounded and its upper end at most 1 + delta/2, so timing the cold first step instead
// moves the member's step time by less than the precision every candidate is timed to.
bool cold_start_negligible(const std::vector<double>& first, const std::vector<double>& next,
                           double delta);

}  // namespace tunescope::tuner
