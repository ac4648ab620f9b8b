// The per-layer find's timings kept in the results DB, so that a find reuses a timing of
// the same conv problem (shape and layout), threads and algorithm measured on the same
// machine before, by a tune of any model, instead of timing it again. The CLI hands one
// to every find of a tune with --db (unless --fresh).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/tuner/PerLayerFind.h"
#include "core/tuner/ResultsDb.h"

namespace tunescope::tuner {

class LayerTimingStore final : public LayerTimingCache {
 public:
  // `model`: the model being tuned, recorded with each new timing.
  LayerTimingStore(ResultsDb& db, const MachineSignature& machine, std::string model);

  std::optional<AlgorithmTiming> lookup(const ConvProblem& problem, int threads,
                                        const std::string& algorithm, int repetitions) override;
  // Kept until flush(), which writes a find's timings in one transaction.
  void store(const ConvProblem& problem, int threads, int repetitions,
             const AlgorithmTiming& timing) override;
  void flush() override;

  size_t reused() const { return reused_; }
  size_t stored() const { return stored_; }  // written to the DB
  // A reuse is an optimisation: the first DB error (a full disk, a lock held too long)
  // turns the store off instead of failing the find; the trials' own writes still
  // report it. Empty: none.
  const std::string& error() const { return error_; }

 private:
  int64_t machine_id();  // the machine's row, made on first need (inside the error handling)

  ResultsDb& db_;
  MachineSignature machine_;
  std::optional<int64_t> machine_id_;
  std::string model_;
  size_t reused_ = 0, stored_ = 0;
  std::string error_;
  std::vector<ResultsDb::LayerTimingRow> pending_;
};

}  // namespace tunescope::tuner
