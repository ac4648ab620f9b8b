// Time <-> pixel mapping, zoom, pan and clamping of the timeline window.
#include "models/TimelineData.h"

#include <algorithm>

namespace tunescope::gui {

void TimelineData::setBounds(int64_t startNs, int64_t endNs) {
  boundsStartNs = startNs;
  boundsEndNs = std::max(endNs, startNs + 1);
  fitAll();
}

void TimelineData::setWidth(int pixels) { width = std::max(pixels, 1); }

void TimelineData::zoomAround(double x, double factor) {
  if (!(factor > 0)) return;
  const double anchor = mapXToTime(x);
  const double newSpan = span() / factor;
  // Keep the anchor at the same fraction of the window.
  const double fraction = x / width;
  viewStartNs = anchor - fraction * newSpan;
  viewEndNs = viewStartNs + newSpan;
  clamp();
}

void TimelineData::panByPixels(double dx) {
  const double dt = dx * nsPerPixel();
  viewStartNs -= dt;
  viewEndNs -= dt;
  clamp();
}

void TimelineData::showWindow(double startNs, double endNs) {
  if (endNs < startNs) std::swap(startNs, endNs);
  viewStartNs = startNs;
  viewEndNs = endNs;
  clamp();
}

void TimelineData::fitAll() {
  viewStartNs = static_cast<double>(boundsStartNs);
  viewEndNs = static_cast<double>(boundsEndNs);
  clamp();
}

void TimelineData::clamp() {
  const double lo = static_cast<double>(boundsStartNs);
  const double hi = static_cast<double>(boundsEndNs);
  const double maxSpan = std::max(hi - lo, kMinSpanNs);
  double s = std::clamp(span(), kMinSpanNs, maxSpan);
  // Shrinking or growing keeps the centre, as the user expects from a zoom limit.
  const double centre = (viewStartNs + viewEndNs) / 2;
  viewStartNs = centre - s / 2;
  viewEndNs = centre + s / 2;
  if (viewStartNs < lo) {
    viewStartNs = lo;
    viewEndNs = lo + s;
  }
  if (viewEndNs > hi && s <= hi - lo) {
    viewEndNs = hi;
    viewStartNs = hi - s;
  }
}

}  // namespace tunescope::gui
