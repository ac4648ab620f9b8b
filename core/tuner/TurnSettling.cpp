// The settle step's measured worth (TurnSettling.h).
#include "core/tuner/TurnSettling.h"

#include <algorithm>
#include <cmath>

namespace tunescope::tuner {

namespace {

std::vector<double> sorted(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values;
}

}  // namespace

QuantileEstimate cold_start_ratio(const std::vector<double>& first,
                                  const std::vector<double>& next) {
  std::vector<double> ratios;
  for (size_t r = 0; r < std::min(first.size(), next.size()); ++r)
    if (next[r] > 0) ratios.push_back(first[r] / next[r]);
  return estimate_quantile(std::move(ratios));
}

bool cold_start_negligible(const std::vector<double>& first, const std::vector<double>& next,
                           double delta) {
  const QuantileEstimate ratio = cold_start_ratio(first, next);
  return ratio.bounded() && ratio.high <= 1 + delta / 2;
}

std::vector<bool> far_behind(const std::vector<std::vector<double>>& rounds,
                             const std::vector<size_t>& racing) {
  std::vector<bool> behind(rounds.size(), false);
  if (racing.size() < 2) return behind;
  for (size_t i : racing)
    if (rounds[i].empty()) return behind;
  size_t fastest = racing.front();
  double fastest_median = INFINITY;
  for (size_t i : racing)
    if (const double m = quantile_of_sorted(sorted(rounds[i]), 0.5); m < fastest_median) {
      fastest_median = m;
      fastest = i;
    }
  const double slowest_of_fastest =
      *std::max_element(rounds[fastest].begin(), rounds[fastest].end());
  for (size_t i : racing)
    behind[i] = i != fastest && *std::min_element(rounds[i].begin(), rounds[i].end()) >
                                    kFarBehindFactor * slowest_of_fastest;
  return behind;
}

}  // namespace tunescope::tuner
