// One tune's find timings in memory over the DB's store (see TuneLayerTimings.h).
#include "core/tuner/TuneLayerTimings.h"

namespace tunescope::tuner {

std::optional<AlgorithmTiming> TuneLayerTimings::lookup(const ConvProblem& problem, int threads,
                                                        const std::string& algorithm,
                                                        int repetitions) {
  const auto it = timings_.find({problem.key(), threads, algorithm});
  if (it != timings_.end() && it->second.first >= repetitions) return it->second.second;
  return store_ ? store_->lookup(problem, threads, algorithm, repetitions) : std::nullopt;
}

void TuneLayerTimings::store(const ConvProblem& problem, int threads, int repetitions,
                             const AlgorithmTiming& timing) {
  auto& kept = timings_[{problem.key(), threads, timing.algorithm}];
  if (repetitions >= kept.first) kept = {repetitions, timing};
  if (store_) store_->store(problem, threads, repetitions, timing);
}

void TuneLayerTimings::flush() {
  if (store_) store_->flush();
}

}  // namespace tunescope::tuner
