// The current time as UTC ISO 8601 ("2026-12-04T21:30:00Z"): what results-DB rows and
// machine-probe figures are stamped with.
#pragma once

#include <string>

namespace tunescope {

std::string utc_now_iso8601();

}  // namespace tunescope
