// The part of a trace that ran inside the ranges of one name: what one candidate ran of a
// session that several candidates took turns in (a tune's rounds with shared sessions,
// core/tuner/Measurement.h MeasureOptions::share_sessions).
#pragma once
#include <string_view>

#include "profiler/Trace.h"

namespace tunescope::profiler {

// The activities, ranges (those ranges included) and flows of `trace` that lie wholly
// inside some range named `name` of `category`, with `trace`'s metadata; sorted as
// `trace` is. Empty of records when no range has that name.
Trace within_ranges(const Trace& trace, std::string_view name, RangeCategory category);

}  // namespace tunescope::profiler
