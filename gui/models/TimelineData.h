// The time <-> pixel mapping of the timeline: a plain value type, unit-tested without
// any widget, shared by painting, mouse handling and the LOD builder.
#pragma once

#include <cstdint>

namespace tunescope::gui {

struct TimelineData {
  // The narrowest window one may zoom to: below a few ns a trace has nothing to show.
  static constexpr double kMinSpanNs = 10.0;

  // Extent of the data (ns on the trace clock); the view never leaves it.
  int64_t boundsStartNs = 0;
  int64_t boundsEndNs = 1;
  // Visible window in ns. Doubles: smooth zoom needs sub-ns positions, and trace
  // clocks (< 2^53 ns, i.e. 104 days) stay exact.
  double viewStartNs = 0;
  double viewEndNs = 1;
  // Width in pixels of the drawing area the window maps onto.
  int width = 1;

  double span() const { return viewEndNs - viewStartNs; }
  double nsPerPixel() const { return span() / width; }
  double mapTimeToX(double timeNs) const { return (timeNs - viewStartNs) * width / span(); }
  double mapXToTime(double x) const { return viewStartNs + x * span() / width; }

  // Sets the data extent and shows all of it.
  void setBounds(int64_t startNs, int64_t endNs);
  void setWidth(int pixels);
  // factor > 1 zooms in, < 1 out; the time under pixel x stays under x unless the
  // window has to be clamped to the data.
  void zoomAround(double x, double factor);
  // Moves the content by dx pixels: dx > 0 drags it right, so earlier time comes in.
  void panByPixels(double dx);
  // Shows the window [startNs, endNs] (clamped).
  void showWindow(double startNs, double endNs);
  void fitAll();
  // Keeps the span within [kMinSpanNs, data extent] and the window inside the data.
  void clamp();
};

}  // namespace tunescope::gui
