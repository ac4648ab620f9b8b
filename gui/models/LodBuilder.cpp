// Level-of-detail merging of sub-pixel records (after tracy's zone clustering).
#include "models/LodBuilder.h"

#include <algorithm>

namespace tunescope::gui {

std::vector<LodBox> buildLod(const LaneSeries& s, const TimelineData& tl, const LodOptions& opt) {
  std::vector<LodBox> boxes;
  const size_t n = s.size();
  if (n == 0) return boxes;
  const double t0 = tl.viewStartNs, t1 = tl.viewEndNs;
  const double minNs = opt.minBoxPx * tl.nsPerPixel();
  const double maxClusterNs = opt.maxClusterPx * tl.nsPerPixel();
  const auto startsBegin = s.starts.begin();
  auto firstStartingAtOrAfter = [&](size_t from, double t) {
    return static_cast<size_t>(
        std::lower_bound(startsBegin + static_cast<ptrdiff_t>(from), s.starts.end(), t,
                         [](int64_t a, double b) { return static_cast<double>(a) < b; }) -
        startsBegin);
  };

  // Nothing starting before t0 - maxDuration can reach into the window.
  size_t i = firstStartingAtOrAfter(0, t0 - static_cast<double>(s.maxDurationNs));
  while (i < n && static_cast<double>(s.starts[i]) < t1) {  // the window is half-open
    if (static_cast<double>(s.ends[i]) < t0) {
      ++i;
      continue;
    }
    const double width = static_cast<double>(s.ends[i] - s.starts[i]);
    if (width >= minNs) {
      boxes.push_back(
          {tl.mapTimeToX(s.starts[i]), tl.mapTimeToX(s.ends[i]), 1, static_cast<uint32_t>(i)});
      ++i;
      continue;
    }
    // A sub-pixel record opens a cluster: absorb every record starting within a pixel
    // of the cluster's end, hopping by binary search, up to maxClusterPx.
    const double clusterStart = static_cast<double>(s.starts[i]);
    const double cap = clusterStart + std::max(maxClusterNs, minNs);
    double clusterEnd = static_cast<double>(s.ends[i]);
    size_t j = i + 1;
    while (j < n) {
      const double limit =
          std::min(std::max(clusterEnd, static_cast<double>(s.starts[j - 1])) + minNs, cap);
      size_t k = firstStartingAtOrAfter(j, limit);
      if (k == j) break;
      // Records in between end before the last one starts (a lane runs one at a time),
      // so only the last can be wide: leave a wide one to be drawn exactly.
      const bool lastIsWide = static_cast<double>(s.ends[k - 1] - s.starts[k - 1]) >= minNs;
      if (lastIsWide) --k;
      if (k > j) clusterEnd = std::max(clusterEnd, static_cast<double>(s.ends[k - 1]));
      j = std::max(j, k);
      if (lastIsWide || limit >= cap) break;
    }
    const double x0 = tl.mapTimeToX(clusterStart);
    const double x1 = std::max(tl.mapTimeToX(clusterEnd), x0 + opt.minBoxPx);
    boxes.push_back({x0, x1, static_cast<uint32_t>(j - i), static_cast<uint32_t>(i)});
    i = j;
  }
  return boxes;
}

}  // namespace tunescope::gui

namespace tunescope::gui {

std::optional<size_t> recordAt(const LaneSeries& s, const TimelineData& tl, double x,
                               double tolerancePx) {
  if (s.size() == 0) return std::nullopt;
  const double t = tl.mapXToTime(x);
  const double tol = tolerancePx * tl.nsPerPixel();
  const double earliest = t - static_cast<double>(s.maxDurationNs) - tol;
  size_t k = static_cast<size_t>(
      std::upper_bound(s.starts.begin(), s.starts.end(), t + tol,
                       [](double v, int64_t a) { return v < static_cast<double>(a); }) -
      s.starts.begin());
  std::optional<size_t> containing, nearest;
  double bestDistance = tol;
  // Walk back over the candidates that can reach t; lanes rarely overlap, so few.
  for (int steps = 0; k > 0 && steps < 256; ++steps) {
    --k;
    const double a = static_cast<double>(s.starts[k]), b = static_cast<double>(s.ends[k]);
    if (a < earliest) break;
    if (a <= t && t <= b) {
      if (!containing || b - a < static_cast<double>(s.ends[*containing] - s.starts[*containing]))
        containing = k;
    } else {
      const double d = t < a ? a - t : t - b;
      if (d <= bestDistance) bestDistance = d, nearest = k;
    }
  }
  return containing ? containing : nearest;
}

}  // namespace tunescope::gui
