// Duration formatting and ruler tick placement.
#include "models/TimeFormat.h"

#include <cmath>

namespace tunescope::gui {

namespace {
struct Unit {
  double ns;
  const char* name;
};
constexpr Unit kUnits[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};

const Unit& unitFor(double ns) {
  for (const Unit& u : kUnits)
    if (std::abs(ns) >= u.ns) return u;
  return kUnits[3];
}
}  // namespace

QString formatDuration(double ns) {
  const Unit& u = unitFor(ns);
  const double v = ns / u.ns;
  if (u.ns == 1) return QStringLiteral("%1 ns").arg(std::llround(v));
  const int decimals = std::abs(v) >= 100 ? 0 : std::abs(v) >= 10 ? 1 : 2;
  return QStringLiteral("%1 %2").arg(v, 0, 'f', decimals).arg(QLatin1String(u.name));
}

double rulerStepNs(const TimelineData& timeline, double minSpacingPx) {
  const double minStep = std::max(timeline.nsPerPixel() * minSpacingPx, 1.0);
  const double decade = std::pow(10.0, std::floor(std::log10(minStep)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * decade >= minStep) return m * decade;
  return 10 * decade;
}

std::vector<RulerTick> rulerTicks(const TimelineData& timeline, double minSpacingPx) {
  const double step = rulerStepNs(timeline, minSpacingPx);
  const Unit& u = unitFor(step);
  // Enough decimals that consecutive labels differ (a 2.5 us step never happens,
  // steps are 1/2/5 x 10^k, so decimals come only from the unit).
  const int decimals = step / u.ns >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step / u.ns)));
  const double origin = static_cast<double>(timeline.boundsStartNs);
  std::vector<RulerTick> ticks;
  const double first = std::ceil((timeline.viewStartNs - origin) / step) * step;
  for (double rel = first; origin + rel <= timeline.viewEndNs; rel += step) {
    RulerTick t;
    t.timeNs = origin + rel;
    t.x = timeline.mapTimeToX(t.timeNs);
    t.label = QStringLiteral("%1 %2").arg(rel / u.ns, 0, 'f', decimals).arg(QLatin1String(u.name));
    ticks.push_back(t);
    if (ticks.size() > 10000) break;  // guards against a degenerate window
  }
  return ticks;
}

}  // namespace tunescope::gui
