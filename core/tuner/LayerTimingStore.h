// The per-layer find's timings kept in the results DB, so that a find reuses a timing of
// the same conv problem (shape and layout), threads and algorithm measured on the same
// machine before, by a tune of any model, instead of timing it again. The CLI hands one
// to every find of a tune with --db (unless --fresh).
#pragma once

#include <string>

#include "core/tuner/PerLayerFind.h"
#include "core/tuner/ResultsDb.h"

namespace tunescope::tuner {

class LayerTimingStore final : public LayerTimingCache {
 public:
  // `model`: the model being tuned, recorded with each new timing.
  LayerTimingStore(ResultsDb& db, const MachineSignature& machine, std::string model);

  std::optional<AlgorithmTiming> lookup(const ConvProblem& problem, int threads, const std::string& algorithm,
                                        int repetitions) override;
  void store(const ConvProblem& problem, int threads, int repetitions, const AlgorithmTiming& timing) override;

  size_t reused() const { return reused_; }
  size_t stored() const { return stored_; }

 private:
  ResultsDb& db_;
  int64_t machine_id_;
  std::string model_;
  size_t reused_ = 0, stored_ = 0;
};

}  // namespace tunescope::tuner
