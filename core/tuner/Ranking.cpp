// The ranking rule and the interleaved verdict.
#include "core/tuner/Ranking.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/base/Error.h"
#include "core/engine/RunKnobs.h"

namespace tunescope::tuner {

bool simpler(const RunConfig& a, const RunConfig& b) {
  // Fewer per-layer overrides, then fewer knobs away from their defaults (nhwc, streams,
  // async update, fft_tile ...), then fewer threads, then smaller counts in catalog order.
  auto key = [](const RunConfig& c) {
    size_t changed = 0;
    std::vector<int64_t> counts;
    for (const KnobSpec& spec : KnobCatalog::instance().specs()) {
      if (spec.key == knobs::threads.key()) continue;
      if (c.knobs.differs_from_default(spec.key)) ++changed;
      if (spec.type == KnobType::integer) counts.push_back(std::stoll(c.knobs.text(spec.key)));
    }
    return std::tuple(c.override_count(), changed, c.threads(), counts);
  };
  return key(a) < key(b);
}

std::vector<size_t> rank_ok_trials(const std::vector<TrialResult>& trials) {
  std::vector<size_t> ranked;
  for (size_t i = 0; i < trials.size(); ++i)
    if (trials[i].status == TrialStatus::ok) ranked.push_back(i);
  std::stable_sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
    const TimingFigures& x = trials[a].figures;
    const TimingFigures& y = trials[b].figures;
    if (trials[a].remeasured != trials[b].remeasured) return trials[a].remeasured;
    if (x.steps != y.steps) return x.steps > y.steps;
    return x.median_eps > y.median_eps;
  });
  return ranked;
}

std::vector<size_t> ranking_led_by(const std::vector<TrialResult>& trials, size_t winner) {
  std::vector<size_t> ranked = rank_ok_trials(trials);
  const auto at = std::find(ranked.begin(), ranked.end(), winner);
  if (at == ranked.end()) fail(ErrorKind::runtime, "the declared winner (trial ", winner, ") is not an ok trial");
  std::rotate(ranked.begin(), at, at + 1);
  return ranked;
}

InterleavedVerdict interleaved_verdict(const TrialResult& first, const TrialResult& second) {
  const double a = first.figures.median_eps, b = second.figures.median_eps;
  const double gap = std::abs(a - b) / std::max(a, b);
  const double noise = std::max(first.figures.spread, second.figures.spread);
  if (gap <= noise)
    return {simpler(second.config, first.config),
            cat("tie within noise (gap ", gap * 100, "% <= spread ", noise * 100, "%): the simpler config wins")};
  return {b > a, cat("confirmed by interleaved re-measurement (gap ", gap * 100, "% > spread ", noise * 100, "%)")};
}

}  // namespace tunescope::tuner
