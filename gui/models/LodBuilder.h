// Level of detail for one timeline row: turns the records visible in a window into at
// most a few boxes per pixel column. Records at least a pixel wide are drawn exactly;
// runs of narrower ones merge into clusters (with their count as a density cue),
// found by binary search so the cost follows the pixel width, not the record count.
#pragma once

#include <cstdint>
#include <vector>

#include "models/LaneSeries.h"
#include "models/TimelineData.h"

namespace tunescope::gui {

struct LodBox {
  double x0 = 0;  // pixels, may lie outside [0, width) for straddling records
  double x1 = 0;
  uint32_t count = 1;  // records merged; 1 = an exact record
  uint32_t first = 0;  // position in the LaneSeries of the first record

  bool isCluster() const { return count > 1; }
};

struct LodOptions {
  double minBoxPx = 1.0;      // narrower records are merged
  double maxClusterPx = 6.0;  // clusters are cut here so density varies along the row
};

std::vector<LodBox> buildLod(const LaneSeries& series, const TimelineData& timeline,
                             const LodOptions& options = {});

}  // namespace tunescope::gui

#include <optional>

namespace tunescope::gui {

// The record under pixel x (the innermost one containing its time), else the nearest
// within tolerancePx; its position in the series. For hover and click.
std::optional<size_t> recordAt(const LaneSeries& series, const TimelineData& timeline, double x,
                               double tolerancePx = 2.0);

}  // namespace tunescope::gui
