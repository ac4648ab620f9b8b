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

// How far behind the fastest a member must be for its settle step to buy nothing: every
// round of it slower than every round of the fastest by this factor. The cold first step
// costs a turn a few percent (lenet5 2-8 %, resnet18-small under 2 %: docs/BENCHMARKS.md),
// so a member this far behind cannot come within delta/2 of the fastest by settling.
inline constexpr double kFarBehindFactor = 1.25;

// The members still racing (`racing`, indices into `rounds`, each member's round times)
// that are far behind the fastest (the lowest median): every round of theirs above
// kFarBehindFactor x the fastest's slowest. Such a member skips its settle step until a
// round of it no longer is: a settle step costs it as much as its timed step, and the
// rounds drop it after a few more (race_drops). Empty before the first round.
std::vector<bool> far_behind(const std::vector<std::vector<double>>& rounds,
                             const std::vector<size_t>& racing);

}  // namespace tunescope::tuner
