// Human-readable durations and ruler ticks (ns/us/ms/s), shared by the ruler, the
// tooltips, the tables and the selection panel.
#pragma once

#include <QString>
#include <cstdint>
#include <vector>

#include "models/TimelineData.h"

namespace tunescope::gui {

// "850 ns", "12.3 us", "4.56 ms", "1.20 s": three significant digits, unit chosen so
// the number is in [1, 1000).
QString formatDuration(double ns);

struct RulerTick {
  double timeNs = 0;  // absolute trace time
  double x = 0;       // pixel position
  QString label;      // time relative to the data start, in the step's unit
};

// Ticks at a 1/2/5 x 10^k step chosen so labels are at least minSpacingPx apart.
double rulerStepNs(const TimelineData& timeline, double minSpacingPx);
std::vector<RulerTick> rulerTicks(const TimelineData& timeline, double minSpacingPx = 90);

}  // namespace tunescope::gui
