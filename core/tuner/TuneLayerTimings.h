// The per-layer find's timings of one tune, kept in memory over the results DB's store
// (LayerTimingStore) when there is one. auto's probe (probe_find) times algorithms on
// two conv problems at the first (layout, threads); where per-layer runs whatever the
// estimates say, the probe times them at the find's own repetitions, and the find then
// takes those timings from here instead of timing them again, with or without a DB.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "core/tuner/PerLayerFind.h"

namespace tunescope::tuner {

class TuneLayerTimings final : public LayerTimingCache {
 public:
  // `store`: the DB's cache behind this one, or null.
  explicit TuneLayerTimings(LayerTimingCache* store) : store_(store) {}

  // This tune's timing of at least `repetitions` runs, else the store's.
  std::optional<AlgorithmTiming> lookup(const ConvProblem& problem, int threads,
                                        const std::string& algorithm, int repetitions) override;
  void store(const ConvProblem& problem, int threads, int repetitions,
             const AlgorithmTiming& timing) override;
  void flush() override;

 private:
  LayerTimingCache* store_;
  // (problem key, threads, algorithm) -> (repetitions, timing)
  std::map<std::tuple<std::string, int, std::string>, std::pair<int, AlgorithmTiming>> timings_;
};

}  // namespace tunescope::tuner
