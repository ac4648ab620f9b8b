// The settle step's measured worth (TurnSettling.h).
#include "core/tuner/TurnSettling.h"

#include <algorithm>

namespace tunescope::tuner {

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

}  // namespace tunescope::tuner
